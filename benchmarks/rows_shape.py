"""Rows 12-16: what users do, in the production shape (issue 22).

- 12: the server itself: the floor (a constant DRF view, token) under `uvicorn --workers 2`
  and under `gunicorn -w 2` (sync), both started as Procfile.production starts them, in the
  same rounds; the production shape (REST under gunicorn) against uvicorn, which can win.
- 13: the browser's session cookie against a token, on the same floor (gunicorn).
- 14: the unread summary on its 200 path (after any change in the warehouse every user's next
  poll takes it), with a session cookie and with a token, against the floor with the same
  authentication. Each request carries an `If-None-Match` that is no longer current, as the
  page's poll does after a change (web/static/web/js/api.js sends its last ETag). Two more
  floors (benchmarks/views.py) split the distance, session cookie: the floor plus one `PING`,
  then plus the summary's read-model call instead, then the summary itself.
- 15: the list's first page of 50 (no `since`, as the page opens), 200 path, against the floor;
  and the list's poll with nothing new (`since` its user's latest cursor) on its 200 path (a
  stale `If-None-Match`, as after a change elsewhere in the warehouse), against the floor.
- 14 and 15 also against the peer of issue 22, django-notifications-hq 1.8.3 (benchmarks/peer.py:
  its own venv, site and database, under `gunicorn -w 2` too), in the same rounds: its
  `unread_count` for the users with 10,000 and 20 unread (goal: ours ≥ 2x), and its unread list
  of 50 against our first page (no goal). `--no-peer` and the tiny preset leave it out.
- 16: opening N event streams at once (token auth, `ready` received) in uvicorn, against a
  minimal SSE endpoint in the same server (benchmarks/asgi.py: no authentication, no Redis);
  with the directory holding every token, just after it was dropped (each open then reads
  its token and roles from the database, as after a deploy), and with session cookies (as
  browsers open them: always through the worker thread, the session read from Redis).

Every target runs once per round, in a rotating order (benchmarks.harness.interleave).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import loadgen, peer, server
from benchmarks.context import Bench
from benchmarks.harness import Line, Measure, at_least, at_most, interleave, paired
from benchmarks.inbox_data import InboxData
from benchmarks.probes import redis_cpu_seconds, tree_cpu_seconds


@dataclass
class Target:
    key: str
    srv: server.Server
    path: str
    headers: dict[str, str]


# An ETag of ours (notifications/api/etags.py) that no answer has: what the page sends after
# a change made its last answer's stale.
STALE_ETAG = {"If-None-Match": 'W/"' + "0" * 24 + '"'}


def session_cookie(user: Any) -> str:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _load(bench: Bench, target: Target) -> loadgen.LoadResult:
    config = bench.config
    result = loadgen.run(
        host=target.srv.host,
        port=target.srv.port,
        path=target.path,
        headers=target.headers,
        connections=config.http_connections,
        seconds=config.http_seconds,
    )
    bad = {s: n for s, n in result.statuses.items() if s != 200}
    if bad or result.errors or not result.requests:
        raise RuntimeError(
            f"{target.key}: statuses {dict(result.statuses)}, {result.errors} errors\n"
            + target.srv.log_tail()
        )
    return result


# --- Where a request's time goes: CPU per request, by process --------------------------------


# Linux's /proc, where the server's CPU is read from (elsewhere the rows carry no split).
_CPU_READABLE = Path("/proc/self/stat").exists()


@dataclass(frozen=True)
class CpuPerRequest:
    """The CPU a target's requests cost, per request, in µs: the server (its master and
    workers), Redis, and this process (the load generator, which shares the machine's cores
    with them)."""

    server: float
    redis: float
    client: float

    @property
    def total(self) -> float:
        return self.server + self.redis + self.client

    def text(self) -> str:
        return (
            f"{self.total:,.0f} µs (server {self.server:,.0f}, Redis {self.redis:,.0f}, "
            f"load generator {self.client:,.0f})"
        )


@dataclass
class Sample:
    load: loadgen.LoadResult
    cpu: CpuPerRequest | None


def _measured(bench: Bench, target: Target, redis: Any | None) -> Sample:
    """A target's load, and what its requests cost in CPU: its server (with its workers),
    `redis` (None: a server that does not use the bench's Redis) and this process."""
    if not _CPU_READABLE:
        return Sample(_load(bench, target), None)
    server = target.srv.process.pid

    def others() -> tuple[float, float]:
        return tree_cpu_seconds(server), redis_cpu_seconds(redis) if redis is not None else 0.0

    # This process's own clock is read next to the load, so reading the others is not in it.
    before = (*others(), time.process_time())
    result = _load(bench, target)
    client = time.process_time()
    after = (*others(), client)
    per = 1e6 / result.requests
    costs = (per * (end - start) for start, end in zip(before, after, strict=True))
    return Sample(result, CpuPerRequest(*costs))


def _median_cpu(samples: list[Sample]) -> CpuPerRequest | None:
    found = [sample.cpu for sample in samples if sample.cpu is not None]
    if not found:
        return None
    return CpuPerRequest(
        statistics.median(x.server for x in found),
        statistics.median(x.redis for x in found),
        statistics.median(x.client for x in found),
    )


def http_rows(
    bench: Bench, data: InboxData, rows: set[str], *, with_peer: bool = True
) -> list[Line]:
    config = bench.config
    token = {"Authorization": f"Token {data.big.token}"}
    cookie = {"Cookie": session_cookie(data.big.user)}
    small_token = {"Authorization": f"Token {data.small.token}"}
    floor = "/bench/floor/"
    bench.log(
        f"gunicorn and uvicorn, {config.http_workers} workers each; "
        f"{config.http_connections} connections, {config.http_seconds:g} s per target per round"
    )
    with ExitStack() as running:
        # The peer first: its first run makes a venv and loads a million rows, not measured.
        rival = peer.start(bench, enabled=with_peer) if rows & {"14", "15"} else None
        if rival is not None:
            running.callback(rival.server.stop)
        wsgi = server.start(workers=config.http_workers, kind="gunicorn")
        running.callback(wsgi.stop)
        asgi = server.start(workers=config.http_workers, kind="uvicorn") if "12" in rows else None
        if asgi is not None:
            running.callback(asgi.stop)
        chosen = [Target("floor-token", wsgi, floor, token)]
        if asgi is not None:
            chosen += [
                Target("floor-token-uvicorn", asgi, floor, token),
                # As behind a proxy without upstream keep-alive (nginx's default): a new
                # connection per request, which is what gunicorn's sync workers always get.
                Target("floor-uvicorn-close", asgi, floor, {**token, "Connection": "close"}),
            ]
        if rows & {"13", "14"}:
            chosen.append(Target("floor-session", wsgi, floor, cookie))
        if "14" in rows:
            chosen += [
                Target("unread-session", wsgi, data.unread_path(), {**cookie, **STALE_ETAG}),
                Target("round-trip-floor-session", wsgi, "/bench/round-trip-floor/", cookie),
                Target(
                    "read-model-floor-session",
                    wsgi,
                    f"/bench/read-model-floor/?warehouse={data.warehouse_id}",
                    {**cookie, **STALE_ETAG},
                ),
                Target(
                    "unread-token-small", wsgi, data.unread_path(), {**small_token, **STALE_ETAG}
                ),
            ]
        if "15" in rows:
            chosen += [
                Target("first-page", wsgi, data.first_page_path(), token),
                Target("list-idle", wsgi, data.list_path(data.big), {**token, **STALE_ETAG}),
            ]
        if rival is not None:
            # The peer's users by their session cookies, the peer's only way in.
            big, small = ({"Cookie": rival.cookies[u]} for u in ("big", "small"))
            if "14" in rows:
                chosen += [
                    Target("peer-unread-big", rival.server, peer.UNREAD_COUNT, big),
                    Target("peer-unread-small", rival.server, peer.UNREAD_COUNT, small),
                    # What the framework costs: a constant without DRF, same server and cookie.
                    Target("plain-floor-session", wsgi, "/bench/plain-floor/", cookie),
                ]
            if "15" in rows:
                chosen.append(Target("peer-list-50", rival.server, peer.UNREAD_LIST, big))
        for target in chosen:  # warm each worker's caches and code paths; not measured
            if config.http_warmup_seconds:
                loadgen.run(
                    host=target.srv.host,
                    port=target.srv.port,
                    path=target.path,
                    headers=target.headers,
                    connections=config.http_connections,
                    seconds=config.http_warmup_seconds,
                )
        # Our servers use the bench's Redis; the peer's do not (its CPU there is not theirs).
        peer_server = rival.server if rival is not None else None
        redis = bench.probe.client
        results = interleave(
            config.rounds,
            {
                t.key: partial(_measured, bench, t, None if t.srv is peer_server else redis)
                for t in chosen
            },
        )

    rate = {
        k: Measure("req/s", [x.load.rate for x in rs], fmt="{:.0f}") for k, rs in results.items()
    }
    cpu = {k: _median_cpu(rs) for k, rs in results.items()}
    lines: list[Line] = []

    def versus(row: str, key: str, base: str, work: str, goal: float | str, name: str) -> None:
        """A line of `key` against `base`; `goal` a least ratio, or the text of a line that
        only explains (no verdict)."""
        ratio = paired(rate[key].values, rate[base].values)
        ours, theirs = cpu[key], cpu[base]
        note = ""
        if ours is not None and theirs is not None:
            note = f"CPU per request: {ours.text()}; {name}: {theirs.text()}"
        lines.append(
            Line(
                row=row,
                work=work,
                note=note,
                project=rate[key],
                baseline=rate[base],
                baseline_name=name,
                ratio=ratio,
                goal=goal if isinstance(goal, str) else f"≥ {goal:g}x",
                met=None if isinstance(goal, str) else at_least(ratio, goal),
            )
        )

    if "12" in rows:
        uvicorn, gunicorn = rate["floor-token-uvicorn"], rate["floor-token"]
        ratio = paired(gunicorn.values, uvicorn.values)
        lines.append(
            Line(
                row="12",
                work="production shape (gunicorn -w 2), constant DRF view, token",
                project=gunicorn,
                baseline=uvicorn,
                baseline_name="uvicorn --workers 2 (keep-alive)",
                ratio=ratio,
                goal="≥ 0.95x",
                met=at_least(ratio, 0.95),
            )
        )
        closing = rate["floor-uvicorn-close"]
        lines.append(
            Line(
                row="12",
                work="the same, uvicorn with a new connection per request (as gunicorn always)",
                project=gunicorn,
                baseline=closing,
                baseline_name="uvicorn, Connection: close",
                ratio=paired(gunicorn.values, closing.values),
                goal="— (which is faster)",
            )
        )
    if "13" in rows:
        versus(
            "13",
            "floor-session",
            "floor-token",
            "constant DRF view: session cookie vs token",
            0.9,
            "token",
        )
    if "14" in rows:
        versus(
            "14",
            "unread-session",
            "floor-session",
            f"unread summary, 200 path (stale ETag), session cookie, {data.big.name}",
            0.7,
            "floor (session)",
        )
        # The distance from the floor to the summary, in three: a round trip at all, the
        # read model's call instead, then what the API adds around it.
        versus(
            "14",
            "round-trip-floor-session",
            "floor-session",
            "the floor plus one Redis round trip (PING), session cookie",
            "— (what reading Redis at all costs)",
            "floor (session)",
        )
        versus(
            "14",
            "read-model-floor-session",
            "round-trip-floor-session",
            "the floor plus the summary's read-model call instead (the user's roles, its one "
            f"round trip, the reply parsed), session cookie, {data.big.name}",
            "— (what the call's work adds to a round trip)",
            "floor + PING (session)",
        )
        versus(
            "14",
            "unread-session",
            "read-model-floor-session",
            f"unread summary, 200 path (stale ETag), session cookie, {data.big.name}, vs the "
            "floor plus its read-model call",
            "— (what the API adds around the call)",
            "floor + read model (session)",
        )
        versus(
            "14",
            "unread-token-small",
            "floor-token",
            f"unread summary, 200 path (stale ETag), token, {data.small.name}",
            0.7,
            "floor (token)",
        )
    if "15" in rows:
        versus(
            "15",
            "first-page",
            "floor-token",
            f"list, first page of 50, 200 path, {data.big.name}",
            0.5,
            "floor (token)",
        )
        versus(
            "15",
            "list-idle",
            "floor-token",
            f"list, nothing new, 200 path (stale ETag), {data.big.name}",
            0.7,
            "floor (token)",
        )
    if rival is not None:
        lines += _peer_lines(rate, data, rows, rival)
    return lines


def _peer_lines(
    rate: dict[str, Measure], data: InboxData, rows: set[str], rival: peer.Peer
) -> list[Line]:
    """Issue 22's goals against django-notifications-hq, each ratio ours / the peer's."""
    where = rival.describe()
    out = []
    if "14" in rows:
        for ours, theirs, work in (
            (
                "unread-session",
                "peer-unread-big",
                f"unread summary, 200 path (stale ETag), session cookie, {data.big.name} vs "
                f"django-notifications-hq's unread_count ({where})",
            ),
            (
                "unread-token-small",
                "peer-unread-small",
                f"unread summary, 200 path (stale ETag), token, {data.small.name} vs "
                f"django-notifications-hq's unread_count (by session cookie; {where})",
            ),
        ):
            ratio = paired(rate[ours].values, rate[theirs].values)
            out.append(
                Line(
                    row="14",
                    work=work,
                    project=rate[ours],
                    baseline=rate[theirs],
                    baseline_name=peer.NAME,
                    ratio=ratio,
                    goal="≥ 2x",
                    met=at_least(ratio, 2.0),
                )
            )
        plain, floor = rate["plain-floor-session"], rate["floor-session"]
        out += [
            Line(
                row="14",
                work="a constant from a plain Django view (the same middleware and session "
                "user, no DRF) vs the constant DRF view (session)",
                project=plain,
                baseline=floor,
                baseline_name="floor (session)",
                ratio=paired(plain.values, floor.values),
                goal="— (what DRF costs)",
            ),
            Line(
                row="14",
                work="the same plain Django constant vs django-notifications-hq's unread_count "
                f"({where})",
                project=plain,
                baseline=rate["peer-unread-big"],
                baseline_name=peer.NAME,
                ratio=paired(plain.values, rate["peer-unread-big"].values),
                goal="— (no answer through this stack is faster)",
            ),
        ]
    if "15" in rows:
        out.append(
            Line(
                row="15",
                work=f"list, first page of 50, 200 path, {data.big.name} vs "
                f"django-notifications-hq's unread list of 50 (`?max=50`; {where})",
                project=rate["first-page"],
                baseline=rate["peer-list-50"],
                baseline_name=peer.NAME,
                ratio=paired(rate["first-page"].values, rate["peer-list-50"].values),
                goal="—",
            )
        )
    return out


# --- row 16: opening streams ------------------------------------------------------------


async def _open_one(host: str, port: int, request: bytes, marker: bytes) -> float:
    """Open one stream; the time at which `marker` arrived. The connection is left open."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(request)
    seen = b""
    while marker not in seen:
        chunk = await reader.read(4096)
        if not chunk:
            raise RuntimeError(f"stream closed before {marker!r}: {seen[:300]!r}")
        seen += chunk
    _OPEN.append(writer)
    return time.perf_counter()


_OPEN: list[asyncio.StreamWriter] = []


async def _open_all(host: str, port: int, requests: list[bytes], marker: bytes) -> float:
    started = time.perf_counter()
    try:
        done = await asyncio.wait_for(
            asyncio.gather(*(_open_one(host, port, r, marker) for r in requests)), timeout=300
        )
        return max(done) - started
    finally:
        for writer in _OPEN:
            writer.close()
        _OPEN.clear()


def _requests(path: str, headers: list[dict[str, str]], host: str) -> list[bytes]:
    out = []
    for extra in headers:
        lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Accept: text/event-stream"]
        lines += [f"{k}: {v}" for k, v in extra.items()]
        out.append(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    return out


def stream_rows(bench: Bench, data: InboxData) -> list[Line]:
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    config = bench.config
    count = config.streams
    users = list(User.objects.bulk_create(User(username=f"bench-stream-{i}") for i in range(count)))
    tokens = Token.objects.bulk_create(Token(user=u, key=Token.generate_key()) for u in users)
    srv = server.start(workers=config.http_workers, kind="uvicorn")
    host = f"{srv.host}:{srv.port}"
    stream_path = f"/api/v1/stream/?warehouse={data.warehouse_id}"
    project = _requests(stream_path, [{"Authorization": f"Token {t.key}"} for t in tokens], host)
    bench.log(f"{count:,} browser sessions")
    browsers = _requests(stream_path, [{"Cookie": session_cookie(u)} for u in users], host)
    baseline = _requests("/bench/sse/", [{}] * count, host)
    bench.log(f"uvicorn, {config.http_workers} workers; {count:,} streams opened at once")

    def side(requests: list[bytes], marker: bytes) -> float:
        return asyncio.run(_open_all(srv.host, srv.port, requests, marker))

    def warm() -> float:
        # Each worker takes a share of the opens: a few passes, not measured, leave (nearly)
        # every token held by both, whatever the round before did.
        for _ in range(3):
            side(project, b"event: ready")
        return side(project, b"event: ready")

    def cold() -> float:
        # As after a deploy or any change of users, roles, tokens or warehouses: every
        # process's directory is dropped, and each open fills it from the database.
        from directory.cache import bump

        bump()
        return side(project, b"event: ready")

    try:
        side(project, b"event: ready")  # warm-up, not measured
        results = interleave(
            config.rounds,
            {
                "warm": warm,
                "cold": cold,
                "session": partial(side, browsers, b"event: ready"),
                "baseline": partial(side, baseline, b"event: ready"),
            },
        )
    finally:
        srv.stop()
    seconds = {k: Measure("s", v, fmt="{:.2f}") for k, v in results.items()}
    return [
        Line(
            row="16",
            work=f"open {count:,} event streams at once (until `ready`), {label}",
            project=seconds[side_name],
            baseline=seconds["baseline"],
            baseline_name="minimal SSE endpoint",
            ratio=(ratio := paired(seconds[side_name].values, seconds["baseline"].values)),
            goal="≤ 2x",
            met=at_most(ratio, 2.0),
        )
        for side_name, label in (
            ("warm", "token, the directory holding every token"),
            ("cold", "token, the directory just dropped (as after a deploy)"),
            ("session", "the browser's session cookie"),
        )
    ]
