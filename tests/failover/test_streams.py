"""Streams on a replicated Redis Cluster (issue rows 4d and 4e): a fresh web process answers a
burst of stream opens with 200 (or 503 with Retry-After), never 500; and losing the node the
process subscribed on (the first of REDIS_URL) does not end instant delivery: the hub
subscribes on a live node, and streams that reconnect replay the gap from their cursor.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx
import pytest

from notifications.services import publish
from tests.failover.conftest import token_headers
from tests.failover.streams import Reader

pytestmark = pytest.mark.django_db(transaction=True)


async def _open(client: httpx.AsyncClient, headers: dict[str, str], warehouse_id: int) -> tuple:
    async with client.stream(
        "GET", "/api/v1/stream/", params={"warehouse": warehouse_id}, headers=headers
    ) as response:
        if response.status_code != 200:
            return response.status_code, response.headers.get("Retry-After"), await response.aread()
        async for line in response.aiter_lines():
            if line == "event: ready":
                return 200, None, b""
        return 200, None, b"ended before ready"


def test_a_fresh_process_answers_50_streams_opened_at_once_without_a_500(fresh_server, shift):
    warehouse, users = shift(5)
    headers = [token_headers(user) for user in users]

    async def burst() -> list[tuple]:
        async with httpx.AsyncClient(base_url=fresh_server, timeout=30) as client:
            return await asyncio.gather(
                *(_open(client, headers[i % len(headers)], warehouse.pk) for i in range(50))
            )

    answers = asyncio.run(burst())
    statuses = [status for status, _, _ in answers]
    assert 500 not in statuses, [a for a in answers if a[0] == 500][:3]
    for status, retry_after, body in answers:
        assert status in (200, 503), (status, body)
        if status == 503:
            assert retry_after, body
    # A healthy cluster: a burst on a fresh process is served, not turned away.
    assert statuses.count(200) == 50, statuses


def test_losing_the_first_node_of_redis_url_keeps_instant_delivery(fresh_server, shift, on_cluster):
    warehouse, users = shift(2)
    first = next(n for n in on_cluster.nodes if n.running)  # the first node of REDIS_URL
    published: list[str] = []
    headers = [token_headers(u) for u in users]

    async def scenario() -> list[Reader]:
        readers = [Reader(fresh_server, h, warehouse.pk) for h in headers]
        tasks = [asyncio.create_task(reader.run()) for reader in readers]
        loop = asyncio.get_running_loop()

        def send(title: str) -> None:
            published.append(
                publish(message_type="REP_NOTICE", warehouse=warehouse, title=title).id
            )

        async def publish_until(deadline: float, title: str) -> None:
            while time.monotonic() < deadline:
                # The warehouse's master may be failing over: the publisher tries again.
                with contextlib.suppress(Exception):
                    await loop.run_in_executor(None, send, title)
                await asyncio.sleep(0.1)

        await asyncio.sleep(1)
        await publish_until(time.monotonic() + 1, "before")
        await loop.run_in_executor(None, first.kill)
        await publish_until(time.monotonic() + 8, "after")

        async def delivered() -> bool:
            return all(set(published) <= set(r.ids) for r in readers)

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not await delivered():
            await asyncio.sleep(0.1)
        for reader in readers:
            reader.stop = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return readers

    readers = asyncio.run(scenario())
    assert published
    for reader in readers:
        assert 500 not in reader.statuses
        missing = set(published) - set(reader.ids)
        assert not missing, f"{len(missing)} of {len(published)} not delivered: {reader.statuses}"
        # Each one exactly once (a replay after a reconnect does not repeat what was sent).
        assert len(reader.ids) == len(set(reader.ids))
