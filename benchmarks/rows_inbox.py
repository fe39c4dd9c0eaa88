"""Rows 4, 5 and 8: Redis time per poll, database queries per poll, and mark all read.

Polls go through Django's test client with token authentication, in this process, so they
cost Redis exactly what a request costs (whatever commands the read model sends) while the
SLOWLOG probe adds up their server time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from benchmarks.baselines import PageIndex, notification_json
from benchmarks.context import Bench
from benchmarks.harness import Line, Measure, compared, interleave, paired
from benchmarks.inbox_data import CONTENT, TTL_SECONDS, InboxData, Poller, auth

GOAL_MS = 0.2
PAGE = 50


def _poll_time(bench: Bench, path: str, token: str, polls: int) -> float:
    """Mean Redis milliseconds per GET of `path` over `polls` requests."""
    from django.test import Client

    client = Client()
    bench.probe.reset()
    for _ in range(polls):
        reply = client.get(path, headers=auth(token))
        assert reply.status_code in (200, 304), reply.content[:300]
    return bench.probe.read().total_us / polls / 1000


def redis_per_poll(bench: Bench, data: InboxData) -> list[Line]:
    """Row 4: nothing new (since = newest) and a first page, at each size, vs a page read."""
    config = bench.config
    n = config.polls_per_round
    page = PageIndex(bench.client(), "page")
    content, _ = notification_json(
        warehouse=data.warehouse_id, message_type="BENCH_T1", ttl=TTL_SECONDS, **CONTENT
    )
    page.fill([content] * config.big)

    def bounded_read() -> float:
        bench.probe.reset()
        for _ in range(n):
            assert len(page.read(0, PAGE)) == min(PAGE, config.big)
        return bench.probe.read().total_us / n / 1000

    pollers = {"small": data.small, "big": data.big, "role": data.role}
    sides: dict[str, Callable[[], float]] = {"page read": bounded_read}
    for key, poller in pollers.items():
        sides[f"new {key}"] = partial(_poll_time, bench, data.list_path(poller), poller.token, n)
        sides[f"first {key}"] = partial(_poll_time, bench, data.first_page_path(), poller.token, n)
    with bench.probe.listening():
        for side in sides.values():  # warm up: scripts loaded, caches filled
            side()
        results = interleave(config.rounds, sides)
    base = Measure("ms", results["page read"], fmt="{:.3f}")
    lines = []
    for kind, label in (("new", "nothing new"), ("first", f"first page of {PAGE}")):
        for key, poller in pollers.items():
            project = Measure("ms", results[f"{kind} {key}"], fmt="{:.3f}")
            ratio = paired(project.values, base.values, unit="x its time", fmt="{:.1f}")
            lines.append(
                Line(
                    row="4",
                    work=f"Redis time per poll ({label}), {poller.name}",
                    project=project,
                    baseline=base,
                    baseline_name=f"page read of {PAGE} at {config.big:,}",
                    ratio=ratio,
                    goal=f"≤ {GOAL_MS} ms",
                    met=project.median <= GOAL_MS,
                )
            )
    return lines


def queries_per_poll(bench: Bench, data: InboxData) -> list[Line]:
    """Row 5: database queries of one steady-state poll (after a first one), token auth."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    lines = []
    for label, path, poller in (
        ("poll list", data.list_path(data.big), data.big),
        ("poll list", data.list_path(data.role), data.role),
        ("unread summary", data.unread_path(), data.role),
    ):
        counts = []
        client.get(path, headers=auth(poller.token))  # the first poll may fill caches
        for _ in range(bench.config.rounds):
            with CaptureQueriesContext(connection) as queries:
                reply = client.get(path, headers=auth(poller.token))
            assert reply.status_code in (200, 304)
            counts.append(float(len(queries)))
        project = Measure("queries", counts, fmt="{:.0f}")
        lines.append(
            Line(
                row="5",
                work=f"database queries per {label}, {poller.name}",
                project=project,
                goal="≤ 1",
                met=project.median <= 1,
                note="; ".join(dict.fromkeys(_shape(q["sql"]) for q in queries.captured_queries)),
            )
        )
    return lines


def _shape(sql: str) -> str:
    """`FROM table` of a query, enough to say what it reads."""
    words = sql.replace('"', "").split()
    tables = [words[i + 1] for i, w in enumerate(words[:-1]) if w.upper() in ("FROM", "JOIN")]
    return " + ".join(dict.fromkeys(tables)) or sql[:40]


def mark_all_read(bench: Bench, data: InboxData) -> list[Line]:
    """Row 8: one mark-all-read call at each size; a fresh user each round."""
    from django.test import Client

    client = Client()
    slowest: dict[str, list[float]] = {"small": [], "big": []}

    def mark(key: str, users: list[Poller]) -> float:
        poller = users.pop(0)
        bench.probe.reset()
        reply = client.post(
            "/api/v1/notifications/read/",
            {"warehouse": data.warehouse_id, "all": True},
            content_type="application/json",
            headers=auth(poller.token),
        )
        spent = bench.probe.read()
        assert reply.status_code == 200, reply.content[:300]
        # The contract, whatever the read model: nothing is left unread afterwards.
        assert reply.json()["unread_count"] == 0, (reply.json(), poller.visible)
        slowest[key].append(spent.slowest_us / 1000)
        return spent.total_us / 1000

    small_users, big_users = list(data.mark_small), list(data.mark_big)
    with bench.probe.listening():
        results = interleave(
            bench.config.rounds,
            {"small": lambda: mark("small", small_users), "big": lambda: mark("big", big_users)},
        )
    small_n, big_n = bench.config.mark_sizes
    small = Measure("ms", results["small"], fmt="{:.2f}")
    big = Measure("ms", results["big"], fmt="{:.2f}")
    worst = Measure("ms", [max(a, b) for a, b in zip(*slowest.values(), strict=True)], fmt="{:.2f}")
    if not max(worst.values):  # no call reached the slow log's threshold
        worst = Measure("ms", [bench.probe.slow_us / 1000], fmt="< {:.1f}")
    return [
        compared(
            "8",
            f"mark all read: Redis time of the call at {big_n:,} vs {small_n:,} unread",
            big,
            small,
            f"at {small_n:,}",
            ratio="project/baseline",
            goal="O(1): ≤ 1.5x",
            maximum=1.5,
        ),
        Line(
            row="8",
            work="mark all read: slowest single Redis call",
            project=worst,
            goal="≤ 5 ms",
            met=worst.median <= 5 and max(worst.values) <= 5,
        ),
    ]
