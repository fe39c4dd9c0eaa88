"""Row 21: what the delivery objective's canaries cost Redis (SPEC 16), at 1,000 warehouses
and the default interval.

One interval's work, as beat and the processes do it: `publish_canaries()` (a registration
and a publish per active warehouse), `poll_canaries()` (the poll path: a read of each
warehouse's canary inbox and a record per canary it sees), one stream process's records of
the canaries its hub received (the stream path: the same script the hub runs, once per
canary), and `check()` run as often as beat runs it in one interval (CANARY_INTERVAL_SECONDS
/ DELIVERY_CHECK_SECONDS: 6 at the defaults; measured once a round and counted that many
times). Before the rounds, every warehouse gets `canary_history` intervals of canaries (an
hour at the default interval is 60), then one unmeasured interval, so the rounds see the
windows and canary inboxes of a steady state.

Redis time is the probe's (commandstats, this process's calls only); the slowest single call
is read from the slow log (100 µs and above). The baseline is the same number of plain
publishes (`publish()` of an alert to one subscribed inbox), in the same rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from benchmarks import _setup
from benchmarks.context import Bench, make_users, subscribe, sync_subscriptions
from benchmarks.harness import Line, Measure, at_most, interleave, paired
from benchmarks.probes import LUA_CLIENT, PROBE_NAME, RedisTime, _text

GOAL_MS = 5.0
THRESHOLD_US = 100


def canary_rows(bench: Bench) -> list[Line]:
    from django.conf import settings

    from delivery import services, store
    from notifications.services import publish
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    active = Warehouse.objects.filter(is_active=True).count()
    Warehouse.objects.bulk_create(
        Warehouse(code=f"CN{i:04d}", name=f"Canary {i}")
        for i in range(max(0, config.canary_warehouses - active))
    )
    sync_subscriptions()
    count = Warehouse.objects.filter(is_active=True).count()  # other rows' warehouses too
    checks = max(1, round(settings.CANARY_INTERVAL_SECONDS / settings.DELIVERY_CHECK_SECONDS))
    plain_type = MessageType.objects.create(
        code="BENCH_PLAIN", name="plain", default_ttl_seconds=3600
    )
    plain_place = Warehouse.objects.filter(is_active=True).order_by("pk").first()
    assert plain_place is not None
    subscribe(plain_place, plain_type, make_users("bench-plain-", 1))
    sync_subscriptions()

    bench.log(f"{count:,} warehouses: {config.canary_history} intervals of canaries first")
    began = time.perf_counter()
    for _ in range(config.canary_history):
        services.publish_canaries()
    published = services.publish_canaries()
    services.poll_canaries(published)  # the poll path has seen the history: a steady state
    bench.log(f"  history in {time.perf_counter() - began:.0f} s")

    check_seconds: list[float] = []

    def steps(after: Callable[[str], None]) -> None:
        """One interval's work; `after(step)` once each step is done."""
        ids = services.publish_canaries()
        after("publish")
        services.poll_canaries(ids)
        after("poll")
        windows = store.windows(list(ids))  # which canary each warehouse got (not measured)
        after("")
        for warehouse_id in ids:
            last = windows[warehouse_id].last
            if last is not None:
                store.arrive(warehouse_id, last.token, store.Path.STREAM)
        after("stream")
        started = time.perf_counter()
        services.check()
        check_seconds.append(time.perf_counter() - started)
        after("check")

    def interval() -> tuple[float, float, dict[str, float], int]:
        """Redis ms of one interval, its slowest call (ms), the part of each step, and the
        poll pass's calls."""
        spent: dict[str, RedisTime] = {}

        def read(step: str) -> None:
            found = bench.probe.read()
            if step:
                spent[step] = found

        bench.probe.reset()
        steps(read)
        parts = {name: t.total_us / 1000 for name, t in spent.items()}
        parts["check"] *= checks
        slowest = max(t.slowest_us for t in spent.values()) / 1000
        return sum(parts.values()), slowest, parts, spent["poll"].calls

    def plain() -> tuple[float, float]:
        bench.probe.reset()
        for n in range(count):
            publish(message_type=plain_type.code, warehouse=plain_place.pk, title=f"Plain {n}")
        spent: RedisTime = bench.probe.read()
        return spent.total_us / 1000, spent.slowest_us / 1000

    with bench.probe.listening(THRESHOLD_US):
        # Each round is a whole interval's work at 1,000 warehouses: three are enough.
        results = interleave(min(3, config.rounds), {"canaries": interval, "plain": plain})
    calls = call_durations(bench, steps)
    total = Measure("ms", [r[0] for r in results["canaries"]], fmt="{:.0f}")
    slowest = Measure(
        "ms", [r[1] or THRESHOLD_US / 1000 for r in results["canaries"]], fmt="{:.2f}"
    )
    baseline = Measure("ms", [r[0] for r in results["plain"]], fmt="{:.0f}")
    baseline_slowest = Measure("ms", [r[1] for r in results["plain"]], fmt="{:.2f}")
    ratio = paired(total.values, baseline.values)
    parts = results["canaries"][-1][2]
    share = total.median / (settings.CANARY_INTERVAL_SECONDS * 1000) * 100
    return [
        Line(
            row="21",
            work=f"canaries at {count:,} warehouses, one {settings.CANARY_INTERVAL_SECONDS:g} s "
            f"interval (publish, poll path, one stream process, {checks} checks): Redis time",
            project=total,
            baseline=baseline,
            baseline_name=f"{count:,} plain publishes",
            ratio=ratio,
            note=f"{share:.2f} % of one core; last round "
            + ", ".join(f"{name} {ms:.0f} ms" for name, ms in parts.items())
            + f"; the poll pass made {results['canaries'][-1][3]:,} calls; one check "
            f"took {min(check_seconds):.1f}-{max(check_seconds):.1f} s of wall time",
        ),
        Line(
            row="21",
            work="that interval: slowest single Redis call",
            project=slowest,
            goal=f"≤ {GOAL_MS:g} ms",
            met=at_most(slowest, GOAL_MS),
            note=f"plain publishes' slowest {baseline_slowest.text()}",
        ),
        Line(
            row="21",
            work="that interval: 99.9th percentile of single Redis calls (one more interval, "
            "slow log at 0)",
            project=Measure("ms", [calls["p999_ms"]], fmt="{:.2f}"),
            note=f"{calls['calls']:,} calls; p99 {calls['p99_ms']:.2f} ms; per call, median "
            "and p99: " + calls["kinds"],
        ),
    ]


def call_durations(bench: Bench, steps: Callable[[Callable[[str], None]], None]) -> dict[str, Any]:
    """One more interval with the slow log at 0: the distribution of its calls' durations
    (this process's calls; a script's own commands, logged by the Lua client, left out), and
    per step and kind of call (command, and a script's number of keys) its median and 99th
    percentile."""
    client = bench.probe.client
    durations: list[float] = []
    kinds: dict[str, list[float]] = {}

    def take(step: str) -> None:
        entries = client.slowlog_get(1_000_000)
        client.slowlog_reset()
        for entry in entries:
            if _text(entry.get("client_address")) == LUA_CLIENT:
                continue
            if _text(entry.get("client_name")) == PROBE_NAME:
                continue
            words = _text(entry["command"]).split()
            if not step or not words or words[0].upper() in {"MULTI", "EXEC", "SLOWLOG"}:
                continue
            kind = f"{step}: {words[0].upper()}"
            if words[0].upper() == "EVALSHA" and len(words) > 2:
                kind += f" of {words[2]} keys"
            durations.append(entry["duration"] / 1000)
            kinds.setdefault(kind, []).append(entry["duration"] / 1000)

    _setup.slowlog_on(client)
    try:
        steps(take)
    finally:
        client.config_set("slowlog-log-slower-than", 10_000)
        client.config_set("slowlog-max-len", 128)
        client.slowlog_reset()
    biggest = sorted(kinds.items(), key=lambda kv: -_setup.percentile(kv[1], 0.5))[:4]
    return {
        "calls": len(durations),
        "p99_ms": _setup.percentile(durations, 0.99),
        "p999_ms": _setup.percentile(durations, 0.999),
        "kinds": "; ".join(
            f"{kind} x {len(found):,} {_setup.percentile(found, 0.5):.2f}/"
            f"{_setup.percentile(found, 0.99):.2f} ms"
            for kind, found in biggest
        ),
    }
