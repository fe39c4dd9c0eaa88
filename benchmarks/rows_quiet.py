"""Row 22: what the quiet floor (SPEC 17, issue 43) costs the calls everyone makes, and waking
what a silence held back.

**The quiet floor on and off.** Two warehouses made alike: QF01 (off) and QN01 (on), each with
`fanout` users subscribed directly to one message type and `quiet_alerts` alerts of it already
published (every tenth critical, the others warnings), so both hold far more than
NOISE_BUDGET_PER_HOUR raises in the last hour. In QN01 the quiet floor is on: a planned silence
of another message type of the warehouse (every publish is checked against it, none is held
back), a mute of the polling user (below critical, for an hour) and the noise budget at its
default; in QF01 none of it: no silence, no mute, and NOISE_BUDGET_PER_HOUR 0 (off; the raises
are logged at publish either way). Each round, each side (rotating which goes first): the polling
user's unread summary (`notifications.selectors.unread_summary`, what
`GET /api/v1/notifications/unread/` runs) `polls_per_round` times, the same for a colleague who
is not muted (the noise budget counts which of their newest unread came quietly), then
`publishes_per_round` `publish()`es of the type (every tenth critical). Per call: wall time, the
commands Redis ran (a script's own commands included: the steadier figure), round trips and
Redis time (benchmarks/probes.py). Ratios on / off per round; goal ≤ 1.1x ("unchanged within
noise").

**A silence's end.** Warehouse QW01: a silence of one type, `wake_alerts` alerts of it published
under it (each held back), the silence ended, then `quiet.services.wake` (what beat runs for it:
SILENCE_WAKE_BATCH alerts per call of lua/unsilence.lua, each woken alert announced as a
publish), at the default batch and at SMALL_BATCH. Measured: the slowest single Redis call
(slow log at 100 µs), the calls and the median wall time of one, the total time. Baseline:
the simple design, a bare script that wakes every held alert in one call
(benchmarks/baselines.BareWake), in the same rounds. Goal: no single call over 5 ms.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks.baselines import BareWake, notification_json
from benchmarks.context import Bench, make_users, subscribe, sync_subscriptions
from benchmarks.harness import Line, Measure, at_most, compared, interleave, paired
from benchmarks.inbox_data import CONTENT, TTL_SECONDS
from benchmarks.probes import wire

GOAL_RATIO = 1.1
GOAL_MS = 5.0
THRESHOLD_US = 100
SMALL_BATCH = 10  # a smaller wake batch, measured beside the default one
DEFAULT_BUDGET = 6  # NOISE_BUDGET_PER_HOUR's default (notifications/conf.py)


def severity_of(n: int) -> str:
    """Every tenth alert critical (a mute below critical lets those through), the rest warnings."""
    return "critical" if n % 10 == 0 else "warning"


def quiet_rows(bench: Bench) -> list[Line]:
    return [*cost_rows(bench), *wake_rows(bench)]


@dataclass(frozen=True)
class PerCall:
    """One side's figures of one kind of call in one round, per call."""

    ms: float
    redis_ms: float
    executed: float  # commands Redis ran, a script's own included
    round_trips: float


def _measured(bench: Bench, count: int, call: Callable[[int], Any]) -> PerCall:
    bench.probe.reset()
    wire.reset()
    started = time.perf_counter()
    for n in range(count):
        call(n)
    seconds = time.perf_counter() - started
    trips = wire.count
    spent = bench.probe.read()
    return PerCall(
        ms=seconds / count * 1000,
        redis_ms=spent.total_us / count / 1000,
        executed=spent.executed / count,
        round_trips=trips / count,
    )


def cost_rows(bench: Bench) -> list[Line]:
    import datetime as dt

    from django.test import override_settings

    from config import timestamps
    from notifications.domain import Severity
    from notifications.selectors import unread_summary
    from notifications.services import publish
    from quiet import services as quiet
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    users = make_users("bench-quiet-", max(2, config.fanout))
    poller, colleague = users[0], users[1]
    alerts = MessageType.objects.create(
        code="BENCH_QUIET",
        name="quiet floor",
        default_ttl_seconds=TTL_SECONDS,
        default_severity="warning",
    )
    other = MessageType.objects.create(
        code="BENCH_QUIET_OTHER", name="silenced", default_ttl_seconds=TTL_SECONDS
    )
    off = Warehouse.objects.create(code="QF01", name="Benchmark quiet floor off")
    on = Warehouse.objects.create(code="QN01", name="Benchmark quiet floor on")
    for warehouse in (off, on):
        subscribe(warehouse, alerts, users)
        subscribe(warehouse, other, users)
    sync_subscriptions()

    bench.log(f"publishing {config.quiet_alerts:,} alerts into each of QF01 and QN01")
    for warehouse in (off, on):
        for n in range(config.quiet_alerts):
            publish(
                message_type=alerts.code, warehouse=warehouse.pk, severity=severity_of(n), **CONTENT
            )
    now = timestamps.now()
    quiet.silence_create(
        warehouse=on,
        message_types=[other],
        starts_at=now - dt.timedelta(minutes=1),
        ends_at=now + dt.timedelta(hours=2),
        reason="Benchmark: another type",
        include_critical=False,
        created_by=None,
    )
    quiet.mute_set(
        user=poller,
        warehouse_id=on.pk,
        until=now + dt.timedelta(hours=1),
        below=Severity.CRITICAL,
    )
    budgets = {"off": 0, "on": DEFAULT_BUDGET}
    places = {"off": off.pk, "on": on.pk}

    # The set-up is what it says: the mute leaves the poller only the critical ones, and more
    # than the budget was raised in the hour (some of the colleague's newest came quietly).
    with override_settings(NOISE_BUDGET_PER_HOUR=DEFAULT_BUDGET):
        muted = unread_summary(user=poller, warehouse_id=on.pk)
        heard = unread_summary(user=colleague, warehouse_id=on.pk)
    criticals = len(range(0, config.quiet_alerts, 10))
    assert muted.unread_count == criticals, (muted.unread_count, criticals)
    assert heard.unread_count == config.quiet_alerts, heard
    assert heard.quiet > 0, heard

    polls, publishes = config.polls_per_round, config.publishes_per_round

    def side(name: str) -> Callable[[], dict[str, PerCall]]:
        warehouse_id = places[name]

        def run() -> dict[str, PerCall]:
            with override_settings(NOISE_BUDGET_PER_HOUR=budgets[name]):
                return {
                    "muted": _measured(
                        bench,
                        polls,
                        lambda _: unread_summary(user=poller, warehouse_id=warehouse_id),
                    ),
                    "colleague": _measured(
                        bench,
                        polls,
                        lambda _: unread_summary(user=colleague, warehouse_id=warehouse_id),
                    ),
                    "publish": _measured(
                        bench,
                        publishes,
                        lambda n: publish(
                            message_type=alerts.code,
                            warehouse=warehouse_id,
                            severity=severity_of(n),
                            **CONTENT,
                        ),
                    ),
                }

        return run

    sides = {"off": side("off"), "on": side("on")}
    with bench.probe.listening():
        for run in sides.values():
            run()  # warm up: scripts loaded, the directory and the silences held
        results = interleave(config.rounds, sides)

    def figures(kind: str, field: str, fmt: str) -> tuple[Measure, Measure]:
        mine = Measure("", [getattr(r[kind], field) for r in results["on"]], fmt=fmt)
        theirs = Measure("", [getattr(r[kind], field) for r in results["off"]], fmt=fmt)
        return mine, theirs

    what = {
        "muted": f"unread summary of the muted user ({config.quiet_alerts:,}+ alerts, "
        "every tenth critical)",
        "colleague": "unread summary of a colleague not muted (the noise budget applies)",
        "publish": f"`publish()` to {len(users)} inboxes",
    }
    lines: list[Line] = []
    for kind, work in what.items():
        ms_on, ms_off = figures(kind, "ms", "{:.3f}")
        ms_on.unit = ms_off.unit = "ms"
        redis_on, redis_off = figures(kind, "redis_ms", "{:.3f}")
        trips_on, trips_off = figures(kind, "round_trips", "{:.1f}")
        lines.append(
            compared(
                "22",
                f"{work}, quiet floor on: ms per call",
                ms_on,
                ms_off,
                "quiet floor off",
                ratio="project/baseline",
                goal=f"≤ {GOAL_RATIO:g}x",
                maximum=GOAL_RATIO,
                note=f"Redis time {redis_on.text()} ms on, {redis_off.text()} ms off; round "
                f"trips {trips_on.text()} on, {trips_off.text()} off",
            )
        )
        ran_on, ran_off = figures(kind, "executed", "{:.1f}")
        lines.append(
            compared(
                "22",
                "the same: commands Redis ran per call (scripts' own included)",
                ran_on,
                ran_off,
                "quiet floor off",
                ratio="project/baseline",
            )
        )
    return lines


@contextlib.contextmanager
def counted(module: Any, name: str) -> Iterator[list[float]]:
    """Count (and time, ms) the calls of `module.name` made meanwhile."""
    original = getattr(module, name)
    took: list[float] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            took.append((time.perf_counter() - started) * 1000)

    setattr(module, name, counting)
    try:
        yield took
    finally:
        setattr(module, name, original)


def wake_rows(bench: Bench) -> list[Line]:
    import datetime as dt

    from django.conf import settings
    from django.test import override_settings

    from config import timestamps
    from notifications.readmodel import quiet as quiet_store
    from notifications.services import publish
    from quiet import services as quiet
    from quiet.models import Silence
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    count = config.wake_alerts
    warehouse = Warehouse.objects.create(code="QW01", name="Benchmark silence's end")
    held_type = MessageType.objects.create(
        code="BENCH_WAKE", name="woken", default_ttl_seconds=TTL_SECONDS
    )
    subscribe(warehouse, held_type, make_users("bench-wake-", 5))
    sync_subscriptions()
    bare = BareWake(bench.client(), "wake")
    content, _ = notification_json(
        warehouse=1, message_type=held_type.code, ttl=TTL_SECONDS, **CONTENT
    )

    def project(batch: int) -> tuple[float, float, int, int, float]:
        """Slowest call (ms), total time (ms), unsilence calls, round trips and the median
        wall time of one call (ms), of a wake at SILENCE_WAKE_BATCH `batch`."""
        now = timestamps.now()
        silence = quiet.silence_create(
            warehouse=warehouse,
            message_types=[held_type],
            starts_at=now - dt.timedelta(minutes=1),
            ends_at=now + dt.timedelta(hours=1),
            reason="Benchmark: held back",
            include_critical=False,
            created_by=None,
        )
        bench.log(f"publishing {count:,} alerts under a silence")
        for n in range(count):
            publish(message_type=held_type.code, warehouse=warehouse.pk, title=f"Held {n}")
        ended = timestamps.now()
        Silence.objects.filter(pk=silence.pk).update(ends_at=ended)
        with counted(quiet_store, "unsilence") as calls:
            bench.probe.reset()
            wire.reset()
            started = time.perf_counter()
            with override_settings(SILENCE_WAKE_BATCH=batch):
                woken = quiet.wake(warehouse_id=warehouse.pk, silence_id=silence.pk)
            took = (time.perf_counter() - started) * 1000
            trips = wire.count
            spent = bench.probe.read()
        Silence.objects.filter(pk=silence.pk).update(woken_at=ended)
        assert woken == count, (woken, count)
        bench.log(
            f"batch {batch}: woke {woken:,} in {len(calls)} calls, {took:.0f} ms; slowest call "
            f"{spent.slowest_us / 1000:.2f} ms ({spent.slowest_command!r}); each call "
            f"{min(calls):.1f}-{max(calls):.1f} ms of wall time"
        )
        return spent.slowest_us / 1000, took, len(calls), trips, statistics.median(calls)

    def simple() -> tuple[float, float, int, int, float]:
        bare.hold(count, content)
        bench.probe.reset()
        wire.reset()
        started = time.perf_counter()
        woken = bare.wake()
        took = (time.perf_counter() - started) * 1000
        trips = wire.count
        spent = bench.probe.read()
        assert woken == count, (woken, count)
        return spent.slowest_us / 1000, took, 1, trips, took

    default_batch = settings.SILENCE_WAKE_BATCH
    # Warm up: both scripts loaded (a first call's SCRIPT LOAD is not the wake's).
    assert quiet.wake(warehouse_id=warehouse.pk, silence_id=0) == 0
    assert bare.wake() == 0
    with bench.probe.listening(THRESHOLD_US, capture=False):
        # Each round publishes `count` alerts first, twice: two rounds are enough.
        results = interleave(
            min(2, config.rounds),
            {
                "project": lambda: project(default_batch),
                "small": lambda: project(SMALL_BATCH),
                "bare": simple,
            },
        )
    floor = THRESHOLD_US / 1000  # a call under the slow log's threshold shows as it
    slowest = Measure("ms", [r[0] or floor for r in results["project"]], fmt="{:.2f}")
    slowest_bare = Measure("ms", [r[0] or floor for r in results["bare"]], fmt="{:.2f}")
    total = Measure("ms", [r[1] for r in results["project"]], fmt="{:.1f}")
    total_bare = Measure("ms", [r[1] for r in results["bare"]], fmt="{:.1f}")
    calls = Measure("", [r[2] for r in results["project"]], fmt="{:.0f}")
    trips = Measure("", [r[3] for r in results["project"]], fmt="{:,.0f}")
    ratio = paired(slowest.values, slowest_bare.values)
    slowest_small = Measure("ms", [r[0] or floor for r in results["small"]], fmt="{:.2f}")
    total_small = Measure("ms", [r[1] for r in results["small"]], fmt="{:.1f}")
    calls_small = Measure("", [r[2] for r in results["small"]], fmt="{:.0f}")
    each = Measure("ms", [r[4] for r in results["project"]], fmt="{:.1f}")
    each_small = Measure("ms", [r[4] for r in results["small"]], fmt="{:.1f}")
    return [
        Line(
            row="22",
            work=f"a silence's end wakes {count:,} open alerts "
            f"(SILENCE_WAKE_BATCH {default_batch}): slowest single Redis call",
            project=slowest,
            baseline=slowest_bare,
            baseline_name="one bare call waking all",
            ratio=ratio,
            goal=f"≤ {GOAL_MS:g} ms",
            met=at_most(slowest, GOAL_MS),
            note=f"{calls.text()} calls of the wake script, median {each.text()} of wall time "
            f"each; {trips.text()} round trips in all",
        ),
        Line(
            row="22",
            work=f"that wake of {count:,}: total time",
            project=total,
            baseline=total_bare,
            baseline_name="one bare call waking all",
            ratio=paired(total.values, total_bare.values),
        ),
        Line(
            row="22",
            work=f"the same wake at SILENCE_WAKE_BATCH {SMALL_BATCH}: slowest single Redis call",
            project=slowest_small,
            baseline=slowest_bare,
            baseline_name="one bare call waking all",
            ratio=paired(slowest_small.values, slowest_bare.values),
            goal=f"≤ {GOAL_MS:g} ms",
            met=at_most(slowest_small, GOAL_MS),
            note=f"{calls_small.text()} calls, median {each_small.text()} of wall time each; "
            f"{total_small.text()} in all",
        ),
    ]
