"""Rows 1-3: polls over HTTP through gunicorn (2 sync workers), 8 connections, vs the floor.

The floor is benchmarks/views.FloorView: the same server, middleware, token authentication,
permission and throttle, returning a constant. Every target runs once per round, in a
rotating order; a round's figure is its requests per second and its p99 latency.

When an endpoint answers with an `ETag`, the load sends it back in `If-None-Match`, as the
warehouse page does, so a 304 path is measured as clients would use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from benchmarks import loadgen, server
from benchmarks.context import Bench
from benchmarks.harness import Line, Measure, compared, interleave
from benchmarks.inbox_data import InboxData, auth


@dataclass
class Target:
    key: str
    path: str
    token: str
    headers: dict[str, str]
    not_modified: int = 0


def _etag_headers(path: str, token: str) -> dict[str, str]:
    """Authorization, plus If-None-Match when the endpoint gives an ETag."""
    from django.test import Client

    reply = Client().get(path, headers=auth(token))
    assert reply.status_code == 200, (path, reply.status_code, reply.content[:300])
    headers = {"Authorization": f"Token {token}"}
    if reply.get("ETag"):
        headers["If-None-Match"] = reply["ETag"]
    return headers


def targets(data: InboxData, rows: set[str]) -> list[Target]:
    wanted = [("floor", "/bench/floor/", data.big.token)]
    if "1" in rows:
        wanted += [
            ("list-small", data.list_path(data.small), data.small.token),
            ("list-big", data.list_path(data.big), data.big.token),
        ]
    if "2" in rows:
        wanted.append(("list-role", data.list_path(data.role), data.role.token))
    if "3" in rows:
        wanted += [
            ("unread-big", data.unread_path(), data.big.token),
            ("unread-role", data.unread_path(), data.role.token),
        ]
    return [Target(k, p, t, _etag_headers(p, t)) for k, p, t in wanted]


def run(bench: Bench, data: InboxData, rows: set[str]) -> list[Line]:
    config = bench.config
    chosen = targets(data, rows)
    bench.log(
        f"gunicorn, {config.http_workers} sync workers; {config.http_connections} connections, "
        f"{config.http_seconds:g} s per target per round, {len(chosen)} targets"
    )
    srv = server.start(workers=config.http_workers)
    try:

        def load(target: Target) -> loadgen.LoadResult:
            result = loadgen.run(
                host=srv.host,
                port=srv.port,
                path=target.path,
                headers=target.headers,
                connections=config.http_connections,
                seconds=config.http_seconds,
            )
            bad = {s: n for s, n in result.statuses.items() if s not in (200, 304)}
            if bad or result.errors or not result.requests:
                raise RuntimeError(
                    f"{target.key}: statuses {dict(result.statuses)}, {result.errors} errors\n"
                    + srv.log_tail()
                )
            target.not_modified += result.statuses.get(304, 0)
            return result

        for target in chosen:  # warm each worker's caches and code paths; not measured
            if config.http_warmup_seconds:
                loadgen.run(
                    host=srv.host,
                    port=srv.port,
                    path=target.path,
                    headers=target.headers,
                    connections=config.http_connections,
                    seconds=config.http_warmup_seconds,
                )
        results = interleave(config.rounds, {t.key: partial(load, t) for t in chosen})
    finally:
        srv.stop()

    rate = {k: Measure("req/s", [r.rate for r in rs], fmt="{:.0f}") for k, rs in results.items()}
    p99 = {
        k: Measure("ms", [r.percentile_ms(0.99) for r in rs], fmt="{:.1f}")
        for k, rs in results.items()
    }
    notes = {t.key: f"{t.not_modified:,} answered 304" if t.not_modified else "" for t in chosen}
    floor = rate["floor"]
    lines: list[Line] = []

    def versus_floor(row: str, key: str, work: str) -> None:
        lines.append(
            compared(
                row,
                f"{work}: req/s; p99 {p99[key].text()} (floor {p99['floor'].text()})",
                rate[key],
                floor,
                "floor",
                ratio="project/baseline",
                goal="≥ 0.7x the floor",
                minimum=0.7,
                note=notes[key],
            )
        )

    if "1" in rows:
        versus_floor("1", "list-small", f"poll list, {data.small.name}")
        versus_floor("1", "list-big", f"poll list, {data.big.name}")
        lines.append(
            compared(
                "1",
                f"poll list: p99 at {data.big.visible:,} vs at {data.small.visible}",
                p99["list-big"],
                p99["list-small"],
                f"at {data.small.visible}",
                ratio="project/baseline",
                goal="≤ 1.5x",
                maximum=1.5,
            )
        )
    if "2" in rows:
        versus_floor("2", "list-role", f"poll list, {data.role.name}")
    if "3" in rows:
        versus_floor("3", "unread-big", f"unread summary, {data.big.name}")
        versus_floor("3", "unread-role", f"unread summary, {data.role.name}")
    return lines
