"""Row 11: the expiry sweep over inbox entries that are all read, and its slowest Redis call.

Warehouse SW01: `sweep_users` users subscribed directly to one type, enough notifications
that their inboxes hold `sweep_entries` entries, every one marked read by its user (mark all
read through the API), then the sweep runs as beat runs it (`expire_all`) at a time when all
of them have expired. The slow log keeps calls of 200 µs and more, so a slowest call under
that shows as "< 0.2 ms"; the round trips are counted by benchmarks/probes.wire.
"""

from __future__ import annotations

import time

from benchmarks.context import Bench, make_users, subscribe, sync_subscriptions
from benchmarks.harness import Line, Measure
from benchmarks.inbox_data import CONTENT
from benchmarks.probes import wire

THRESHOLD_US = 200
GOAL_MS = 5.0


def sweep_rows(bench: Bench) -> list[Line]:
    from rest_framework.test import APIClient

    from config import timestamps
    from notifications.services import expire_all, publish
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    notifications = max(1, config.sweep_entries // config.sweep_users)
    entries = notifications * config.sweep_users
    warehouse = Warehouse.objects.create(code="SW01", name="Benchmark sweep")
    message_type = MessageType.objects.create(
        code="BENCH_SWEEP", name="sweep", default_ttl_seconds=60
    )
    users = make_users("bench-sweep-", config.sweep_users)
    subscribe(warehouse, message_type, users)
    sync_subscriptions()
    bench.log(
        f"publishing {notifications:,} notifications to {config.sweep_users} inboxes "
        f"({entries:,} entries) and marking them all read"
    )
    for _ in range(notifications):
        publish(message_type=message_type.code, warehouse=warehouse.pk, **CONTENT)
    client = APIClient()
    for user in users:
        client.force_authenticate(user)
        reply = client.post(
            "/api/v1/notifications/read/", {"warehouse": warehouse.pk, "all": True}, format="json"
        )
        assert reply.status_code == 200, reply.content
        assert reply.json()["unread_count"] == 0, reply.content

    wire.reset()
    with bench.probe.listening(THRESHOLD_US, capture=False):
        started = time.perf_counter()
        report = expire_all(at_ms=timestamps.now_ms() + 2 * 3600 * 1000)
        seconds = time.perf_counter() - started
        spent = bench.probe.read()
    calls = wire.count
    bench.log(f"sweep: {report}; slowest call: {spent.slowest_command!r}")
    slowest_ms = spent.slowest_us / 1000
    slowest = Measure("ms", [slowest_ms], fmt="{:.2f}")
    if not spent.slowest_us:  # no call reached the slow log's threshold
        slowest = Measure("ms", [THRESHOLD_US / 1000], fmt="< {:.1f}")
    return [
        Line(
            row="11",
            work=f"expiry sweep of {entries:,} inbox entries, all read: total time",
            project=Measure("s", [seconds], fmt="{:.2f}"),
            note=f"{calls:,} round trips",
        ),
        Line(
            row="11",
            work="expiry sweep: slowest single Redis call",
            project=slowest,
            goal=f"≤ {GOAL_MS:g} ms",
            met=slowest_ms <= GOAL_MS,
        ),
    ]
