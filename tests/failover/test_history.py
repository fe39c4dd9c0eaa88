"""A history checker in the spirit of Jepsen's: a bounded run on a 3-master cluster with a
replica each that kills, one after another, a master, a replica and the first node of
REDIS_URL while publishers (retrying with Idempotency-Keys), pollers, streams and chat senders
run over HTTP; then it checks the history: every acknowledged publish is in the inbox, every
poller's and every stream's history exactly once; every acknowledged chat message is stored
once, ids without gaps; nothing answered 500; streams resumed within seconds of each kill.

It runs only in CI's cluster pass (`pytest --redis-cluster`): it takes about a minute.
Publishing waits for a replica (REDIS_WAIT_REPLICAS=1, policy degrade) so that an
acknowledged notification survives the promotion of the replica that confirmed it; chat
sends do not wait (docs/operating/scaling.md: a chat message acknowledged in the last moment
before a master dies can be lost), so the chat checks are for duplicates and gaps, and a lost
message is counted and printed, not failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx
import pytest

from devredis.embedded_cluster import ClusterNode, EmbeddedCluster
from notifications import keys as notification_keys
from tests.failover.conftest import token_headers
from tests.failover.streams import Reader
from tests.redis_option import CLUSTER_ENV

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        os.environ.get(CLUSTER_ENV) != "1", reason="the --redis-cluster pass only (a minute)"
    ),
]

SETTLE_SECONDS = 6  # load between kills: long enough for a failover (node timeout 1 s)
RESUME_LIMIT_SECONDS = 15


@dataclass
class History:
    statuses: Counter[int] = field(default_factory=Counter)
    published: dict[str, float] = field(default_factory=dict)  # acked id -> ack time
    retried: int = 0
    given_up: int = 0
    sent: dict[int, str] = field(default_factory=dict)  # acked chat message id -> body
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answered(self, status: int) -> None:
        with self.lock:
            self.statuses[status] += 1


def write_until_acked(client: httpx.Client, history: History, url: str, body: dict, key: str):
    """POST with an Idempotency-Key, retrying (same key) until acknowledged or given up."""
    for attempt in range(40):
        try:
            answer = client.post(url, json=body, headers={"Idempotency-Key": key})
        except httpx.HTTPError:
            answer = None
        if answer is not None:
            history.answered(answer.status_code)
            if answer.status_code == 201:
                if attempt:
                    with history.lock:
                        history.retried += 1
                return answer.json()
        time.sleep(0.2)  # a client's retry interval
    with history.lock:
        history.given_up += 1
    return None


def publisher(base, headers, warehouse_id, history: History, stop: threading.Event, name: str):
    with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        n = 0
        while not stop.is_set():
            n += 1
            body = {"message_type": "REP_NOTICE", "warehouse": warehouse_id, "title": f"{name}-{n}"}
            done = write_until_acked(client, history, "/api/v1/notifications/", body, f"{name}-{n}")
            if done is not None:
                with history.lock:
                    history.published[done["id"]] = time.monotonic()
            time.sleep(0.05)


def chat_sender(base, headers, chat_id, history: History, stop: threading.Event, name: str):
    url = f"/api/v1/chats/{chat_id}/messages/"
    with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        n = 0
        while not stop.is_set():
            n += 1
            done = write_until_acked(client, history, url, {"body": f"{name}-{n}"}, f"{name}-{n}")
            if done is not None:
                with history.lock:
                    history.sent[done["id"]] = done["body"]
            time.sleep(0.05)


def poller(base, headers, warehouse_id, seen: list[str], history: History, stop: threading.Event):
    since = None
    with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        while not stop.is_set():
            params = {"warehouse": warehouse_id, "include_read": "true", "limit": 200}
            if since is not None:
                params["since"] = since
            try:
                answer = client.get("/api/v1/notifications/", params=params)
            except httpx.HTTPError:
                time.sleep(0.2)
                continue
            history.answered(answer.status_code)
            if answer.status_code == 200:
                page = answer.json()
                seen.extend(item["id"] for item in page["results"])
                since = page["next_since"]
                if len(page["results"]) == 200:  # a full page: more may be waiting
                    continue
            time.sleep(0.2)


class TimedReader(Reader):
    """A stream reader that also notes when each notification arrived."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.arrivals: dict[str, float] = {}
        self.ready = threading.Event()  # its first stream is open: its history starts

    def on_event(self, event: str) -> None:
        if event == "ready":
            self.ready.set()

    def on_notification(self) -> None:
        for item in self.ids[len(self.arrivals) :]:
            self.arrivals.setdefault(item, time.monotonic())


def test_history_under_a_master_a_replica_and_the_first_node_killed(
    fresh_server, shift, on_cluster: EmbeddedCluster, settings, capsys
):
    settings.REDIS_WAIT_REPLICAS = 1
    settings.REDIS_WAIT_TIMEOUT_MS = 1000
    warehouse, (rita, ralf, pete, paul) = shift(4)
    from django.contrib.auth.models import Permission

    for publisher_user in (pete, paul):
        publisher_user.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    headers = dict(
        zip(
            ("rita", "ralf", "pete", "paul"),
            map(token_headers, (rita, ralf, pete, paul)),
            strict=True,
        )
    )
    chat = httpx.post(
        f"{fresh_server}/api/v1/chats/",
        # Pete never reads the chat, so no message is seen by every member and cleaned up.
        json={"members": [ralf.pk, pete.pk], "message": "start"},
        headers=headers["rita"],
        timeout=10,
    )
    assert chat.status_code == 201, chat.text
    chat_id = chat.json()["id"]

    history = History()
    stop = threading.Event()  # the writers
    stop_polls = threading.Event()  # the pollers, once they caught up
    polled: dict[str, list[str]] = {"rita": [], "ralf": []}
    threads = [
        threading.Thread(
            target=publisher, args=(fresh_server, headers[u], warehouse.pk, history, stop, u)
        )
        for u in ("pete", "paul")
    ]
    threads += [
        threading.Thread(
            target=chat_sender, args=(fresh_server, headers[u], chat_id, history, stop, u)
        )
        for u in ("rita", "ralf")
    ]
    threads += [
        threading.Thread(
            target=poller,
            args=(fresh_server, headers[u], warehouse.pk, polled[u], history, stop_polls),
        )
        for u in ("rita", "ralf")
    ]
    readers = [TimedReader(fresh_server, headers[u], warehouse.pk) for u in ("rita", "ralf")]

    async def read_all() -> None:
        await asyncio.gather(*(r.run() for r in readers), return_exceptions=True)

    loop = asyncio.new_event_loop()

    def follow_streams() -> None:
        with contextlib.suppress(asyncio.CancelledError):  # how the run ends them
            loop.run_until_complete(read_all())
        loop.close()

    stream_thread = threading.Thread(target=follow_streams)

    # The victims: a master that is not the first node, a replica of another shard, then the
    # first node of REDIS_URL (a master carrying the hub's first subscription).
    first = on_cluster.nodes[0]
    warehouse_master = on_cluster.master_of(notification_keys.contents(warehouse.pk))
    masters = on_cluster.masters()
    master = next(m for m in masters if m is not first and m is not warehouse_master)
    replica_of = {n.port: replica_master(on_cluster, n) for n in on_cluster.nodes}
    replica = next(
        n
        for n in on_cluster.nodes
        if replica_of[n.port] is not None and replica_of[n.port] not in (master.port, first.port)
    )
    kills: list[tuple[str, float]] = []
    started = time.monotonic()
    stream_thread.start()
    for reader in readers:
        assert reader.ready.wait(15), "a stream did not open"
    for thread in threads:
        thread.start()
    try:
        time.sleep(SETTLE_SECONDS)  # the load runs; the faults come on a timetable
        for name, node in (("master", master), ("replica", replica), ("first node", first)):
            kills.append((name, time.monotonic()))
            node.kill()
            time.sleep(SETTLE_SECONDS)
    finally:
        stop.set()
        for thread in threads[:4]:
            thread.join(timeout=60)
        # Let the streams and pollers catch up with the last acknowledged writes.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(
            set(history.published) <= set(seen)
            for seen in (*(r.ids for r in readers), *polled.values())
        ):
            time.sleep(0.2)
        stop_polls.set()
        for thread in threads[4:]:
            thread.join(timeout=60)
    for reader in readers:
        reader.stop = True
    loop.call_soon_threadsafe(lambda: [t.cancel() for t in asyncio.all_tasks(loop)])
    stream_thread.join(timeout=10)

    stored_messages: list[dict] = []
    while True:
        final = httpx.get(
            f"{fresh_server}/api/v1/chats/{chat_id}/messages/",
            params={"limit": 100, "after": stored_messages[-1]["id"] if stored_messages else 0},
            headers=headers["pete"],
            timeout=10,
        )
        assert final.status_code == 200, final.text
        if not final.json()["results"]:
            break
        stored_messages += final.json()["results"]
    acked = set(history.published)
    resume = {}
    for name, at in kills:
        firsts = []
        for reader in readers:
            after = [t for t in reader.arrivals.values() if t > at]
            firsts.append(min(after) - at if after else float("inf"))
        resume[name] = max(firsts)
    lost_messages = set(history.sent) - {m["id"] for m in stored_messages}
    with capsys.disabled():
        print(
            f"\nhistory: {time.monotonic() - started:.0f} s; publishes acked {len(acked)}, "
            f"chat messages acked {len(history.sent)}, retried {history.retried}, "
            f"given up {history.given_up}; answers {dict(sorted(history.statuses.items()))}; "
            f"stream resume after each kill (s): "
            + ", ".join(f"{k} {v:.1f}" for k, v in resume.items())
            + f"; acked chat messages lost in failover: {len(lost_messages)}"
        )

    assert history.statuses[500] == 0
    assert set(history.statuses) <= {200, 201, 503}, history.statuses
    assert len(acked) > 20
    inbox = []
    since = 0
    while True:
        page = httpx.get(
            f"{fresh_server}/api/v1/notifications/",
            params={
                "warehouse": warehouse.pk,
                "since": since,
                "limit": 200,
                "include_read": "true",
            },
            headers=headers["rita"],
            timeout=10,
        ).json()
        inbox += [item["id"] for item in page["results"]]
        since = page["next_since"]
        if not page["results"]:
            break
    for where, ids in (
        ("inbox", inbox),
        *((f"poll of {u}", seen) for u, seen in polled.items()),
        *((f"stream {i}", r.ids) for i, r in enumerate(readers)),
    ):
        counts = Counter(ids)
        missing = acked - set(counts)
        assert not missing, f"{where}: {len(missing)} acked publishes missing"
        assert all(n == 1 for n in counts.values()), f"{where}: duplicates"
    ids = [m["id"] for m in stored_messages]
    assert ids == sorted(set(ids)), "chat: duplicated or unordered message ids"
    bodies = Counter(m["body"] for m in stored_messages)
    assert all(n == 1 for n in bodies.values()), "chat: a retried send stored twice"
    for name, seconds in resume.items():
        assert seconds < RESUME_LIMIT_SECONDS, f"streams did not resume after the {name} kill"


def replica_master(cluster: EmbeddedCluster, node: ClusterNode) -> int | None:
    """The port of the master this node replicates, None for a master."""
    info = node.client().info("replication")
    return int(info["master_port"]) if info.get("role") == "slave" else None
