"""Rows 17-18 (SPEC 14): pressing an alert action, and the reminders' and e-mails' beat tick.

Row 17: an operator presses an action on an open alert (`POST .../actions/<code>/` through
DRF's test client, the whole Django stack in this process): it is claimed for them, the run
and its outbox row are written in one transaction, the history records `action` and the
outbox task is queued on the broker (no worker runs: what is measured is the press's answer).
The baseline, in the same rounds: the lifecycle claim of another open alert (`.../claim/`)
plus one database write (a transaction inserting one row), i.e. "the floor's time plus one
database write". Users take turns so no user nears the API's throttle.

Row 18: `followup_alerts` open alerts of a type that reminds every minute and e-mails after 5
minutes (two index entries each). One beat tick (`actions.tasks.send_reminders`' work) when
nothing is due, then one tick per round when everything is due: how many entries a tick
handles (at most ALERT_REMINDER_BATCH x ALERT_REMINDER_BATCHES per warehouse), its time, its
round trips and its slowest Redis call (the slow log), median and range over the rounds.
"""

from __future__ import annotations

import itertools
import time

from benchmarks.context import Bench, make_users, subscribe, sync_subscriptions
from benchmarks.harness import Line, Measure, at_most, interleave, paired
from benchmarks.probes import wire

THRESHOLD_US = 200
SLOWEST_GOAL_MS = 5.0


def press_rows(bench: Bench) -> list[Line]:
    from django.contrib.auth.models import Group
    from django.db import transaction
    from rest_framework.test import APIClient

    from actions.models import AlertAction
    from inventory.models import Bin
    from notifications.services import publish
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    per_round = config.press_alerts
    warehouse = Warehouse.objects.create(code="AC01", name="Benchmark actions")
    message_type = MessageType.objects.create(
        code="BENCH_ACTION", name="action", default_ttl_seconds=3600
    )
    AlertAction.objects.create(
        message_type=message_type,
        code="done",
        label="Done",
        url="https://wms.example/hook",  # never called here: no outbox worker runs
    )
    role = Group.objects.create(name="bench-press")
    users = make_users("bench-press-", 10)
    role.user_set.add(*users)
    subscribe(warehouse, message_type, roles=[role])
    sync_subscriptions()
    clients = []
    for user in users:
        client = APIClient()
        client.force_authenticate(user)
        clients.append(client)
    turns = itertools.cycle(clients)
    writes = itertools.count()

    def fresh() -> list[str]:
        return [
            publish(message_type=message_type.code, warehouse=warehouse.pk, title="Replenish").id
            for _ in range(per_round)
        ]

    def timed(path: str, expected: int) -> float:
        ids = fresh()
        started = time.perf_counter()
        for notification_id in ids:
            reply = next(turns).post(
                f"/api/v1/notifications/{notification_id}/{path}",
                {"warehouse": warehouse.pk},
                format="json",
            )
            assert reply.status_code == expected, reply.content
        return (time.perf_counter() - started) / per_round * 1000

    def one_write() -> float:
        started = time.perf_counter()
        for _ in range(per_round):
            with transaction.atomic():
                Bin.objects.create(warehouse=warehouse, code=f"W-{next(writes)}")
        return (time.perf_counter() - started) / per_round * 1000

    timed("actions/done/", 202)  # warm: the catalog, the scripts, the connections
    timed("claim/", 200)
    found = interleave(
        config.rounds,
        {
            "press": lambda: timed("actions/done/", 202),
            "claim": lambda: timed("claim/", 200),
            "write": one_write,
        },
    )
    floor = [c + w for c, w in zip(found["claim"], found["write"], strict=True)]
    ratio = paired(found["press"], floor)
    return [
        Line(
            row="17",
            work="press an alert action on an open alert (claim, run + outbox row, history), "
            "per request",
            project=Measure("ms", found["press"]),
            baseline=Measure("ms", floor),
            baseline_name="claim + one DB write",
            ratio=ratio,
            goal="≤ 1.0x",
            met=at_most(ratio, 1.0),
            note=f"claim alone {Measure('ms', found['claim']).text()}, "
            f"one DB write {Measure('ms', found['write']).text()}",
        )
    ]


def followup_rows(bench: Bench) -> list[Line]:
    from django.conf import settings
    from django.contrib.auth.models import Group

    from actions import followups
    from config import timestamps
    from notifications import keys
    from notifications.services import publish
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    alerts = config.followup_alerts
    warehouse = Warehouse.objects.create(code="RM01", name="Benchmark reminders")
    supervisors = Group.objects.create(name="bench-supervisors")
    for user in make_users("bench-supervisor-", 5):
        user.email = f"{user.username}@example.com"
        user.save()
        supervisors.user_set.add(user)
    operators = Group.objects.create(name="bench-operators")
    operators.user_set.add(*make_users("bench-operator-", 5))
    message_type = MessageType.objects.create(
        code="BENCH_REMIND",
        name="remind",
        default_ttl_seconds=24 * 3600,
        remind_every_seconds=60,
        remind_max=3,
        email_after_seconds=300,
        escalation_role=supervisors,
    )
    subscribe(warehouse, message_type, roles=[operators])
    sync_subscriptions()
    bench.log(f"publishing {alerts:,} open alerts that remind and e-mail")
    for n in range(alerts):
        publish(message_type=message_type.code, warehouse=warehouse.pk, title=f"Alert {n}")
    indexed = bench.client().zcard(keys.reminders(warehouse.pk))
    now = timestamps.now_ms()
    cap = settings.ALERT_REMINDER_BATCH * settings.ALERT_REMINDER_BATCHES

    def tick(at_ms: int) -> tuple[float, dict[str, int], int, float, str]:
        wire.reset()
        with bench.probe.listening(THRESHOLD_US, capture=False):
            started = time.perf_counter()
            counts = followups.pass_warehouse(warehouse.pk, at_ms=at_ms)
            seconds = time.perf_counter() - started
            spent = bench.probe.read()
        slowest = spent.slowest_us / 1000
        return seconds, counts, wire.count, slowest, spent.slowest_command

    idle_s, _, idle_calls, _, _ = tick(now)
    # One due tick per round: each takes the next 1,000 of the 20,000 due entries (the first
    # reminders come first: they are due before the e-mails). The slowest call of one tick is
    # one sample of a maximum, so the row gives the median and range over the rounds.
    handled: list[float] = []
    seconds: list[float] = []
    trips: list[float] = []
    slowest: list[float] = []
    for _ in range(config.rounds):
        due_s, counts, due_calls, slowest_ms, command = tick(now + 3600 * 1000)
        handled.append(counts["reminded"] + counts["emailed"])
        seconds.append(due_s)
        trips.append(due_calls)
        slowest.append(slowest_ms or THRESHOLD_US / 1000)
        bench.log(
            f"a due tick: {counts}, {due_calls} round trips, slowest call {slowest_ms:.2f} ms"
            + (f" ({command.split(' ', 1)[0]})" if command else "")
        )
    handled_m = Measure("", handled, fmt="{:,.0f}")
    slowest_m = Measure("ms", slowest, fmt="{:.2f}")
    return [
        Line(
            row="18",
            work=f"one beat tick of reminders and e-mails at {alerts:,} open alerts "
            f"({indexed:,} index entries), all due: entries handled",
            project=handled_m,
            goal=f"≤ {cap:,} (bounded)",
            met=at_most(handled_m, cap),
            note=f"{Measure('s', seconds, fmt='{:.2f}').text()}, "
            f"{Measure('', trips, fmt='{:,.0f}').text()} round trips, "
            f"{settings.ALERT_REMINDER_BATCH} entries per script call",
        ),
        Line(
            row="18",
            work="that tick: slowest single Redis call (slow log at "
            f"{THRESHOLD_US} µs; median and range over {len(slowest)} tick(s))",
            project=slowest_m,
            goal=f"≤ {SLOWEST_GOAL_MS:g} ms",
            met=at_most(slowest_m, SLOWEST_GOAL_MS),
        ),
        Line(
            row="18",
            work=f"a beat tick with nothing due at {alerts:,} open alerts",
            project=Measure("ms", [idle_s * 1000]),
            note=f"{idle_calls} round trip(s)",
        ),
    ]
