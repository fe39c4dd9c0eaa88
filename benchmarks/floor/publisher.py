"""The WMS: a process that publishes the floor's alerts through the REST API while the shift
runs, each warehouse at random times (a Poisson process of `rate_per_minute`), a share of them
critical. A publish answered 503 (Redis away) or not answered is sent again with the same
`Idempotency-Key` until it is acknowledged (201) or two minutes have passed. Its network is
the WMS's wired one: nothing is lost on purpose.
"""

from __future__ import annotations

import asyncio
import random
import string
import time
import uuid
from collections import Counter
from datetime import datetime
from typing import Any

import httpx

from benchmarks.floor.plan import ALERT_TYPE, CONFIRM_FIELD, Plan

BUDGET = 120.0
STATUS_EVERY = 5.0


def _iso_seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


async def _publish_one(
    client: httpx.AsyncClient,
    warehouse: int,
    *,
    critical: bool,
    rng: random.Random,
    records: list[dict[str, Any]],
) -> None:
    aisle = rng.choice(string.ascii_uppercase[:8])
    place = f"{aisle}-{rng.randint(1, 40):02d}-{rng.randint(1, 6):02d}"
    quantity = rng.randint(1, 40)
    body = {
        "message_type": ALERT_TYPE,
        "warehouse": warehouse,
        "title": f"Bin {place} is {'empty' if critical else 'low'}",
        "body": f"{quantity} short after the last wave",
        "data": {CONFIRM_FIELD: place, "qty": -quantity},
        "severity": "critical" if critical else "warning",
    }
    key = uuid.uuid4().hex
    record: dict[str, Any] = {
        "warehouse": warehouse,
        "severity": body["severity"],
        "key": key,
        "first_sent": time.time(),
    }
    statuses: Counter[str] = Counter()
    attempts = 0
    while time.time() < record["first_sent"] + BUDGET:
        attempts += 1
        sent = time.time()
        try:
            answer = await client.post(
                "/api/v1/notifications/", json=body, headers={"Idempotency-Key": key}
            )
        except httpx.HTTPError as exc:
            statuses[type(exc).__name__] += 1
            await asyncio.sleep(1.0)
            continue
        statuses[str(answer.status_code)] += 1
        if answer.status_code == 201:
            created = answer.json()
            record.update(
                id=str(created["id"]),
                created_at=_iso_seconds(created["created_at"]),
                sent=sent,
                acknowledged=time.time(),
                recipients=created["recipients"],
                replayed=answer.headers.get("Idempotent-Replayed") == "true",
            )
            break
        if answer.status_code in (429, 502, 503, 504):
            try:
                wait = float(answer.headers.get("Retry-After", "1"))
            except ValueError:
                wait = 1.0
            await asyncio.sleep(min(5.0, max(0.2, wait)))
            continue
        record["refused"] = f"{answer.status_code}: {answer.text[:300]}"
        break
    record.update(attempts=attempts, statuses=dict(statuses))
    records.append(record)


async def _warehouse(
    client: httpx.AsyncClient,
    plan: Plan,
    warehouse: int,
    end_at: float,
    records: list[dict[str, Any]],
) -> None:
    rng = random.Random(plan.seed * 7919 + warehouse)
    rate = plan.rate_per_minute / 60.0
    next_at = time.time() + rng.expovariate(rate)
    while next_at < end_at:
        await asyncio.sleep(max(0.0, next_at - time.time()))
        critical = rng.random() < plan.critical_share
        await _publish_one(client, warehouse, critical=critical, rng=rng, records=records)
        next_at += rng.expovariate(rate)


async def _main(plan: Plan, end_at: float, out: Any) -> None:
    records: list[dict[str, Any]] = []
    headers = {"Authorization": f"Token {plan.publisher_token}"}
    async with httpx.AsyncClient(base_url=plan.api_base, timeout=30.0, headers=headers) as client:
        loops = [
            asyncio.create_task(_warehouse(client, plan, w, end_at, records))
            for w in plan.warehouses
        ]
        while not all(task.done() for task in loops):
            await asyncio.wait(loops, timeout=STATUS_EVERY)
            out.put(
                (
                    "publisher",
                    {
                        "published": sum(1 for r in records if "id" in r),
                        "critical": sum(
                            1 for r in records if "id" in r and r["severity"] == "critical"
                        ),
                        "retried": sum(1 for r in records if r["attempts"] > 1),
                        "failed": sum(1 for r in records if "id" not in r),
                    },
                )
            )
        for task in loops:
            task.result()  # an unexpected error of the publisher is the run's error
    out.put(("published", records))


def run(plan: Plan, end_at: float, out: Any) -> None:
    """The process's entry point (multiprocessing, spawned)."""
    asyncio.run(_main(plan, end_at, out))
