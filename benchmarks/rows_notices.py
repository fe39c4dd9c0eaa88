"""Rows 19-20 (SPEC 15): the roster of a big notice, an acknowledgement, publishing a notice.

Row 19: a notice to `notice_members` members of one role in a warehouse with shifts (so who is
on shift is worked out for each): the roster's database queries (the goal: bounded, the same
at any size; tests/notices/test_roster.py checks 10 against 1,000) and its time; and the
writes of one acknowledgement (the goal: one INSERT).

Row 20: publishing a notice to `notice_publish_members` members (five roles) against
publishing an alert of a type those five roles subscribe to, in the same rounds: both reach
the same five role inboxes. Two lines: the publish's Redis work (round trips and server time
per publish, from the probe) next to the alert's, and the whole `publish_current` next to the
alert's publish, which includes what an alert has not: reading the notice and its audience
(two queries) and recording the version as published (one UPDATE, committed on its own). Each
notice publish is a new version of its notice (the text changed, written before the clock).
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections.abc import Callable

from benchmarks.context import Bench, make_users, subscribe, sync_subscriptions
from benchmarks.harness import Line, Measure, at_most, interleave, paired
from benchmarks.probes import wire


def roster_rows(bench: Bench) -> list[Line]:
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from config import timestamps
    from notices import selectors, services
    from notices.models import Notice, NoticeAck
    from shifts.models import Shift
    from subscriptions.models import Warehouse

    members = bench.config.notice_members
    warehouse = Warehouse.objects.create(code="NT01", name="Benchmark notices")
    floor = Group.objects.create(name="bench-notice-floor")
    bench.log(f"making {members:,} members")
    users = make_users("bench-notice-", members)
    User.groups.through.objects.bulk_create(
        [User.groups.through(user_id=u.pk, group_id=floor.pk) for u in users]
    )
    Shift.objects.create(
        warehouse=warehouse, role=floor, name="Early", starts=dt.time(6), ends=dt.time(14)
    )
    notice = Notice(warehouse=warehouse, title="Forklift lane B closed", body="Use lane C.")
    notice.save()
    notice.roles.set([floor])
    NoticeAck.objects.bulk_create(
        NoticeAck(
            notice=notice, version=1, user=u, acked_at=timestamps.now(), text_hash=notice.text_hash
        )
        for u in users[: members // 2]
    )

    selectors.roster(notice=notice, at=timestamps.now())  # warm: the schedule, the connection
    times: list[float] = []
    queries: list[float] = []
    for _ in range(bench.config.rounds):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            roster = selectors.roster(notice=notice, at=timestamps.now())
            times.append((time.perf_counter() - started) * 1000)
        queries.append(len(captured))
    assert roster.total == members

    late = users[-1]
    with CaptureQueriesContext(connection) as captured:
        services.notice_ack(user=late, notice_id=notice.pk, version=1)
    writes = [q["sql"] for q in captured if q["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE")]
    return [
        Line(
            row="19",
            work=f"roster of a notice to {members:,} members (on shift worked out): queries",
            project=Measure("", queries, fmt="{:.0f}"),
            goal="≤ 3 (bounded)",
            met=max(queries) <= 3,
            note=f"{Measure('ms', times).text()} per roster",
        ),
        Line(
            row="19",
            work="one acknowledgement: database writes",
            project=Measure("", [len(writes)], fmt="{:.0f}"),
            goal="1 INSERT",
            met=len(writes) == 1 and writes[0].startswith("INSERT"),
            note=f"{len(captured)} queries in all (the notice, the audience check, the insert)",
        ),
    ]


def publish_rows(bench: Bench) -> list[Line]:
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from notices import services
    from notices.models import Notice
    from notifications.services import publish
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    members = config.notice_publish_members
    per_round = config.notice_publishes
    warehouse = Warehouse.objects.create(code="NT02", name="Benchmark notice publishing")
    roles = [Group.objects.create(name=f"bench-notice-role-{n}") for n in range(5)]
    users = make_users("bench-notice-pub-", members)
    User.groups.through.objects.bulk_create(
        [
            User.groups.through(user_id=u.pk, group_id=roles[i % len(roles)].pk)
            for i, u in enumerate(users)
        ]
    )
    alert_type = MessageType.objects.create(
        code="BENCH_NOTICE_ALERT", name="alert", default_ttl_seconds=3600
    )
    subscribe(warehouse, alert_type, roles=roles)
    sync_subscriptions()
    services.notice_type()
    notice = Notice(warehouse=warehouse, title="Cold-chain check", body="v1")
    notice.save()
    notice.roles.set(roles)
    versions = iter(range(2, 10**9))

    def next_version() -> None:
        # A new version per publish, written before the clock starts: what is measured is the
        # publish of SPEC 15, not the edit's row update.
        version = next(versions)
        Notice.objects.filter(pk=notice.pk).update(version=version, body=f"v{version}")

    def notice_once() -> None:
        assert services.publish_current(notice_id=notice.pk)

    def alert_once() -> None:
        publish(message_type=alert_type.code, warehouse=warehouse.pk, title="Check", body="x")

    # Both sides write the notice's next version before each publish, outside the clock: the
    # notice needs it, and the alert's publish then follows the same pause (a commit on this
    # disk takes ~10 ms, long enough for the shared machine to put Redis to sleep).
    def timed(one: Callable[[], None]) -> float:
        spent = 0.0
        for _ in range(per_round):
            next_version()
            started = time.perf_counter()
            one()
            spent += time.perf_counter() - started
        return spent / per_round * 1000

    def redis_work(one: Callable[[], None]) -> tuple[float, float]:
        """(round trips, Redis server µs) per publish, from the probe (benchmarks/probes.py)."""
        trips = 0
        with bench.probe.listening():
            for _ in range(per_round):
                next_version()  # the database only: nothing sent to Redis
                wire.reset()
                one()
                trips += wire.count
            spent = bench.probe.read()
        return trips / per_round, spent.total_us / per_round

    keys = itertools.count()

    def keyed_alert_once() -> None:
        # The alert with an Idempotency-Key as the notice's publish carries one (its record).
        publish(
            message_type=alert_type.code,
            warehouse=warehouse.pk,
            title="Check",
            body="x",
            idempotency_key=f"bench-{next(keys)}",
        )

    timed(notice_once)  # warm
    timed(alert_once)
    next_version()
    with CaptureQueriesContext(connection) as captured:
        notice_once()
    queries = [q["sql"].split()[0] for q in captured]
    found = interleave(
        config.rounds,
        {
            "notice": lambda: timed(notice_once),
            "alert": lambda: timed(alert_once),
            "notice redis": lambda: redis_work(notice_once),
            "alert redis": lambda: redis_work(alert_once),
            "keyed alert redis": lambda: redis_work(keyed_alert_once),
        },
    )
    notice_us = [us for _, us in found["notice redis"]]
    alert_us = [us for _, us in found["alert redis"]]
    keyed_us = Measure("µs", [us for _, us in found["keyed alert redis"]])
    notice_trips = Measure("", [n for n, _ in found["notice redis"]], fmt="{:.0f}")
    alert_trips = Measure("", [n for n, _ in found["alert redis"]], fmt="{:.0f}")
    redis_ratio = paired(notice_us, alert_us)
    ratio = paired(found["notice"], found["alert"])
    writes = sum(1 for q in queries if q in ("INSERT", "UPDATE", "DELETE"))
    return [
        Line(
            row="20",
            work=f"publish a notice to {members:,} members (5 roles): its Redis work, "
            "server time per publish",
            project=Measure("µs", notice_us),
            baseline=Measure("µs", alert_us),
            baseline_name="an alert to the same 5 roles",
            ratio=redis_ratio,
            goal="≤ 1.5x",
            met=at_most(redis_ratio, 1.5),
            note=f"round trips per publish: notice {notice_trips.text()}, "
            f"alert {alert_trips.text()}; the notice's carries an Idempotency-Key (one version "
            f"is published once): the alert with one takes {keyed_us.text()}",
        ),
        Line(
            row="20",
            work=f"the whole publish of a notice to {members:,} members (`publish_current`), "
            "per publish, with its bookkeeping write",
            project=Measure("ms", found["notice"]),
            baseline=Measure("ms", found["alert"]),
            baseline_name="an alert to the same 5 roles",
            ratio=ratio,
            goal="≤ 1.5x",
            met=at_most(ratio, 1.5),
            note=f"{len(queries)} queries: {', '.join(queries)}; {writes} write (the "
            "published version, committed on its own); an alert writes no database row",
        ),
    ]
