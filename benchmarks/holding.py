"""`python -m benchmarks.holding`: what each piece of state a process holds buys on the
benchmark row it serves (issue 38, "Hold only what pays").

For every piece - a per-process cache, a path that answers from held state and confirms it
later in the same round trip, or a coalescer that makes calls arriving together one call -
the operation of its row (docs/performance.md) is timed in interleaved rounds with the piece
as the product has it and without it. "Without" is a monkeypatch applied here, in the
benchmark, only while its side runs: the product has no setting for it. Each round runs both
sides one after the other, in an order that alternates, and gives the ratio of their times
(without / with); the figure is the median ratio and its range over the rounds. A ratio of
1.25 means the piece makes the operation 25 % faster (1 - 1/1.25 = 20 % of its time saved);
a range that includes 1.0 is "not distinguishable" on this machine.

Everything runs in this process (Django's test client with a token or a session cookie, or
the services called directly) against the embedded Redis and the throw-away SQLite database
the benchmarks start, at the quick preset's sizes, except row 16: stream opens go through
two `uvicorn --workers 2` servers started side by side, one as the product is and one with
the piece switched off (benchmarks/holding_asgi.py, told which by BENCH_WITHOUT).

Beside the time, each side's database queries and Redis round trips per operation are
counted once (after the warm-up), as rows 5, 9, 10 and 19 count them.

    python -m benchmarks.holding [--rounds N] [--only NAME,...] [--list] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from benchmarks import _setup
from benchmarks.probes import redis_cpu_seconds, tree_cpu_seconds

Patch = Callable[[], contextlib.AbstractContextManager[None]]


@dataclass(frozen=True)
class Piece:
    """One thing held per process, and how to measure it: the workload of its row, and the
    patch that takes it away."""

    name: str
    kind: str  # "cache", "confirm-later" or "coalescer"
    row: str
    workload: str  # a key of Workloads.ops (or a stream side, "open ...")
    without: str  # a key of WITHOUT (in-process) or of SERVER_WITHOUT (row 16)
    what: str


PIECES = [
    # --- the directory's cache (directory/cache.py) ---
    Piece("tokens", "cache", "1-3", "poll", "tokens", "API tokens with their users"),
    Piece("roles", "cache", "1-3", "poll", "roles", "each user's roles (group ids)"),
    Piece("warehouses", "cache", "1-3", "poll", "warehouses", "every warehouse"),
    Piece("message_types", "cache", "6", "publish", "message_types", "every message type"),
    Piece("users", "cache", "14", "session", "users", "session users by id"),
    Piece("held sessions", "cache", "14", "session", "sessions", "`_sessions`: sessions as read"),
    # --- holdings (directory/holdings.py) ---
    Piece("actions catalog", "cache", "15", "first page", "catalog", "actions by type"),
    Piece("shift schedule", "cache", "19", "roster", "schedule", "every shift and role member"),
    # --- elsewhere ---
    Piece("parsed notifications", "cache", "15", "first page", "parsed", "domain `_parsed`"),
    Piece("shown items", "cache", "15", "first page", "shown", "serializers `_shown`"),
    Piece(
        "subscribers", "cache", "6", "publish", "subscribers", "store `subscriber_cache` (token)"
    ),
    Piece("last sent", "cache", "9", "send", "last_sent", "`_last_sent`: a sender's chat members"),
    Piece("held fetches", "cache", "10", "fetch idle", "held_fetches", "chat lists and marks"),
    Piece(
        "held fetches (200 pending)",
        "cache",
        "10",
        "fetch pending",
        "held_fetches",
        "the same, on a fetch with news in every chat",
    ),
    Piece("usernames", "cache", "— (chat on a stream)", "chat event", "names", "hub `_names`"),
    # --- confirm-later paths ---
    Piece(
        "held version (poll)",
        "confirm-later",
        "1-3",
        "poll",
        "holding",
        "read_confirmed: the version read with the poll's data",
    ),
    Piece(
        "held version (session poll)",
        "confirm-later",
        "14",
        "session",
        "holding",
        "the same, with the held session confirmed alongside",
    ),
    Piece(
        "publish's version check",
        "confirm-later",
        "6",
        "publish",
        "holding",
        "confirmed_writes: the version checked by the publish script",
    ),
    Piece(
        "held token open",
        "confirm-later",
        "16",
        "open warm",
        "held_open",
        "stream open from the held directory, confirmed with the cursor",
    ),
    # --- coalescers ---
    Piece("batched reads", "coalescer", "16", "open warm", "batched_reads", "stream"),
    Piece("batched calls (cold)", "coalescer", "16", "open cold", "batched_calls", "stream"),
    Piece("batched calls (sessions)", "coalescer", "16", "open session", "batched_calls", ""),
    Piece("hold_tokens", "coalescer", "16", "open cold", "hold_tokens", "two queries for all"),
    Piece("hold_users", "coalescer", "16", "open session", "hold_users", "two queries for all"),
    Piece("sessions.preload", "coalescer", "16", "open session", "preload", "one round trip"),
]


# --- switching a piece off (in-process) -----------------------------------------------------


class _Forgetful(dict):
    """A dict that keeps nothing."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def update(self, *args: Any, **kwargs: Any) -> None:
        pass

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return default


@contextlib.contextmanager
def _attribute(owner: Any, name: str, value: Any) -> Iterator[None]:
    before = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, before)


@contextlib.contextmanager
def _directory_part(part: str) -> Iterator[None]:
    """The directory's cache keeping nothing of `part` (each use reads the database)."""
    from directory import cache

    whole = part in ("warehouses", "message_types")
    forgetting = type(
        "Forgetting",
        (cache._Cache,),
        {
            part: property(
                lambda self: None if whole else _Forgetful(),
                lambda self, value: None,
            )
        },
    )
    with _attribute(cache, "_cache", forgetting()):
        yield


@contextlib.contextmanager
def _without_sessions() -> Iterator[None]:
    from directory import cache

    cache._sessions.clear()
    with _attribute(cache, "hold_session", lambda key, raw: None):
        yield


@contextlib.contextmanager
def _per_request(holding: Any) -> Iterator[None]:
    """A holding loaded once per request instead of once per version and process."""
    from directory import snapshot

    memo: dict[int, tuple[Any, Any]] = {}

    def get() -> Any:
        scope = snapshot.current_scope()
        if scope is None:
            return holding._load()
        found = memo.get(id(scope))
        if found is None or found[0] is not scope:
            if len(memo) > 64:
                memo.clear()
            found = memo[id(scope)] = (scope, holding._load())
        return found[1]

    holding.get = get
    try:
        yield
    finally:
        del holding.get


def _held_per_request(module: str, holding: str) -> Patch:
    """A switch loading `module.holding` once per request (the module imported only then)."""
    return lambda: _per_request(getattr(importlib.import_module(module), holding))


def _replaced(module: str, name: str, value: Any) -> Patch:
    """A switch setting `module.name` to `value` while it lasts (the module imported only
    then)."""
    return lambda: _attribute(importlib.import_module(module), name, value)


@contextlib.contextmanager
def _without_subscribers() -> Iterator[None]:
    """Subscribers known only within one publish: its first attempt sends no token and takes
    the members the script answers with for its next (what the loop would do without a
    cache)."""
    from notifications import store

    class WithinOnePublish(store._SubscriberCache):
        def entry(self, pair: tuple[int, int]) -> tuple[str, tuple[str, ...], str]:
            found = super().entry(pair)
            with self._lock:
                self._entries.pop(pair, None)
            return found

    with _attribute(store, "subscriber_cache", WithinOnePublish()):
        yield


@contextlib.contextmanager
def _without_names() -> Iterator[None]:
    yield  # the workload's hub is told (Workloads.hub_names)


WITHOUT: dict[str, Patch] = {
    "tokens": lambda: _directory_part("tokens"),
    "roles": lambda: _directory_part("roles"),
    "warehouses": lambda: _directory_part("warehouses"),
    "message_types": lambda: _directory_part("message_types"),
    "users": lambda: _directory_part("users"),
    "sessions": _without_sessions,
    "catalog": _held_per_request("actions.catalog", "CATALOG"),
    "schedule": _held_per_request("shifts.cache", "SCHEDULE"),
    "parsed": _replaced("notifications.domain", "_parsed", _Forgetful()),
    "shown": _replaced("notifications.api.serializers", "_shown", _Forgetful()),
    "subscribers": _without_subscribers,
    "last_sent": _replaced("messaging.services", "_last_sent", _Forgetful()),
    "held_fetches": _replaced("messaging.held_fetches", "held", lambda user_id: None),
    "names": _without_names,
    # No request answers from the held version (nor the held session): the version is read
    # first, in a round trip of its own, as on Redis Cluster.
    "holding": _replaced("directory.cache", "holding", contextlib.nullcontext),
}


# --- switching a piece off in the stream's server (row 16) ------------------------------------


def _server_without_batched_reads() -> None:
    from stream.batched_reads import BatchedReads

    async def get(self: Any, key: int) -> Any:
        return await self._read(key)

    BatchedReads.get = get  # type: ignore[method-assign]


def _server_without_batched_calls() -> None:
    from stream.batched_calls import BatchedCalls

    async def call(self: Any, argument: Any) -> Any:
        [answer] = await self._run_batch([argument])
        if isinstance(answer, Exception):
            raise answer
        return answer

    BatchedCalls.call = call  # type: ignore[method-assign]


def _set_in_server(module: str, name: str, value: Any) -> Callable[[], None]:
    """A switch setting `module.name` to `value` for good (a worker of the server)."""
    return lambda: setattr(importlib.import_module(module), name, value)


SERVER_WITHOUT: dict[str, Callable[[], None]] = {
    "held_open": _set_in_server(
        "stream.access", "held_token_access", lambda headers, warehouse_id: None
    ),
    "batched_reads": _server_without_batched_reads,
    "batched_calls": _server_without_batched_calls,
    "hold_tokens": _set_in_server("directory.cache", "hold_tokens", lambda keys: None),
    "hold_users": _set_in_server("directory.cache", "hold_users", lambda user_ids: None),
    "preload": _set_in_server("directory.sessions", "preload", lambda session_keys: {}),
}


def switch_off_in_server(name: str) -> None:
    """Called by benchmarks/holding_asgi.py in each uvicorn worker."""
    if name:
        SERVER_WITHOUT[name]()


# --- the workloads ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One operation of a row, run `n` times per round; `prepare` (not measured) before each."""

    n: int
    one: Callable[[], Any]
    prepare: Callable[[], Any] | None = None


@dataclass
class Workloads:
    """The data of the rows and their operations, by workload key."""

    ops: dict[str, Op] = field(default_factory=dict)
    hub_names: dict[str, bool] = field(default_factory=lambda: {"keep": True})


class Meter:
    """CPU seconds spent so far by this process, by Redis and by the processes of `pids` (a
    server and its workers): what an operation costs the machine, which other processes
    running at the same time do not change the way they change its wall time."""

    def __init__(self, redis_url: str) -> None:
        import redis

        self._redis = redis.Redis.from_url(redis_url)
        self.pids: list[int] = []

    def now(self) -> float:
        spent = time.process_time() + redis_cpu_seconds(self._redis)
        return spent + sum(tree_cpu_seconds(pid) for pid in self.pids)


def run(op: Op, meter: Meter) -> tuple[float, float]:
    """Wall and CPU milliseconds per operation over `op.n` runs."""
    wall = cpu = 0.0
    if op.prepare is None:
        cpu_before, started = meter.now(), time.perf_counter()
        for _ in range(op.n):
            op.one()
        wall, cpu = time.perf_counter() - started, meter.now() - cpu_before
    else:
        for _ in range(op.n):
            op.prepare()
            cpu_before, started = meter.now(), time.perf_counter()
            op.one()
            wall += time.perf_counter() - started
            cpu += meter.now() - cpu_before
    return wall / op.n * 1000, cpu / op.n * 1000


def build(bench: Any, wanted: set[str]) -> Workloads:
    """The data and operations of the workloads in `wanted`."""
    from django.contrib.auth.models import Group
    from django.test import Client

    from benchmarks import inbox_data
    from benchmarks.context import make_users, subscribe, sync_subscriptions
    from benchmarks.inbox_data import CONTENT, auth
    from benchmarks.rows_shape import STALE_ETAG
    from directory import cache as directory

    work = Workloads()
    if wanted & {"poll", "session", "first page"}:
        data = inbox_data.build(bench)
        _give_actions(data)
        client = Client()
        role_headers = auth(data.role.token)
        poll_path = data.list_path(data.role)

        def poll() -> None:
            reply = client.get(poll_path, headers=role_headers)
            assert reply.status_code == 200, reply.content[:300]
            assert not reply.json()["results"]

        browser = Client()
        browser.force_login(data.big.user)
        unread = data.unread_path()

        def session() -> None:
            reply = browser.get(unread, headers=STALE_ETAG)
            assert reply.status_code == 200, reply.content[:300]

        big_headers = auth(data.big.token)
        first_path = data.first_page_path()

        def first_page() -> None:
            reply = client.get(first_path, headers=big_headers)
            assert reply.status_code == 200, reply.content[:300]
            assert len(reply.json()["results"]) == min(50, data.big.visible)

        work.ops["poll"] = Op(50, poll)
        work.ops["session"] = Op(50, session)
        work.ops["first page"] = Op(15, first_page)

    if "publish" in wanted:
        from notifications.services import publish
        from subscriptions.models import MessageType, Warehouse

        fans = make_users("bench-hold-fan-", bench.config.fanout)
        warehouse = Warehouse.objects.create(code="HB01", name="Benchmark holding")
        kind = MessageType.objects.create(code="BENCH_HB01", name="HB01", default_ttl_seconds=3600)
        subscribe(warehouse, kind, fans)
        sync_subscriptions()

        def publish_one() -> None:
            result = publish(message_type=kind.code, warehouse=warehouse.code, **CONTENT)
            assert result.recipients == len(fans), result

        work.ops["publish"] = Op(25, publish_one)

    if wanted & {"send", "fetch idle", "fetch pending"}:
        from messaging import services

        sender, *others = make_users("bench-hold-chat-", 8)
        chat = services.chat_create_group(
            creator=sender, member_ids=[u.pk for u in others], message="shift starts"
        )

        def send() -> None:
            services.message_send(user=sender, chat_id=chat.id, body="Bin A-01-03 is full")

        work.ops["send"] = Op(100, send)

        writer, reader = make_users("bench-hold-pending-", 2)
        chats = [
            services.chat_create_group(creator=writer, member_ids=[reader.pk], message="hi").id
            for _ in range(20)
        ]
        services.messages_fetch_pending(user=reader)

        def fetch_idle() -> None:
            assert not services.messages_fetch_pending(user=reader)

        def fill() -> None:
            for chat_id in chats:
                for _ in range(10):
                    services.message_send(user=writer, chat_id=chat_id, body="wave 8813")

        def fetch_pending() -> None:
            found = services.messages_fetch_pending(user=reader)
            assert sum(len(p.messages) for p in found) == 200

        work.ops["fetch idle"] = Op(50, fetch_idle)
        work.ops["fetch pending"] = Op(2, fetch_pending, prepare=fill)

    if "roster" in wanted:
        roster = _roster(bench)

        def roster_one() -> None:
            with directory.request_scope():
                roster()

        work.ops["roster"] = Op(1, roster_one)

    if "chat event" in wanted:
        work.ops["chat event"] = _chat_events(work)
    del Group
    return work


def _give_actions(data: Any) -> None:
    """Two actions on each type of the inbox data, as alert types have (so N's `actions` is
    not empty on the first page)."""
    from actions.models import AlertAction
    from subscriptions.models import MessageType

    for kind in MessageType.objects.filter(code__startswith="BENCH_T"):
        AlertAction.objects.create(
            message_type=kind,
            code="recount",
            label="Recount",
            label_zh="重新盘点",
            url="https://wms.example/hooks/recount",
        )
        AlertAction.objects.create(
            message_type=kind,
            code="move",
            label="Move stock",
            label_zh="移库",
            url="https://wms.example/hooks/move",
            confirm_field="bin",
        )


def _roster(bench: Any) -> Callable[[], Any]:
    """Row 19's set-up (benchmarks/rows_notices.py), at the preset's size."""
    import datetime as dt

    from django.contrib.auth.models import Group, User

    from benchmarks.context import make_users
    from config import timestamps
    from notices import selectors
    from notices.models import Notice
    from shifts.models import Shift
    from subscriptions.models import Warehouse

    members = bench.config.notice_members
    warehouse = Warehouse.objects.create(code="HN01", name="Benchmark holding notices")
    floor = Group.objects.create(name="bench-hold-floor")
    users = make_users("bench-hold-notice-", members)
    User.groups.through.objects.bulk_create(
        [User.groups.through(user_id=u.pk, group_id=floor.pk) for u in users]
    )
    Shift.objects.create(
        warehouse=warehouse, role=floor, name="Early", starts=dt.time(6), ends=dt.time(14)
    )
    notice = Notice(warehouse=warehouse, title="Lane B closed", body="Use lane C.")
    notice.save()
    notice.roles.set([floor])

    def roster() -> Any:
        found = selectors.roster(notice=notice, at=timestamps.now())
        assert found.total == members
        return found

    return roster


def _chat_events(work: Workloads) -> Op:
    """The hub presenting 100 chat messages of one sender to a stream (one operation)."""
    from benchmarks.context import make_users
    from stream import events
    from stream.hub import Hub, Listener

    sender, member = make_users("bench-hold-hub-", 2)
    hub = Hub()
    loop = asyncio.new_event_loop()

    def present(n: int) -> None:
        listener = Listener(user_id=member.pk, warehouse_id=1, role_ids=(), limit=n + 1)
        hub._by_user[member.pk].add(listener)
        kept = hub._names
        if not work.hub_names["keep"]:
            hub._names = _Forgetful()
        try:

            async def run() -> None:
                for i in range(n):
                    event = events.ChatEvent(
                        chat_id="g:1",
                        member_ids=frozenset({sender.pk, member.pk}),
                        message_id=i,
                        sender_id=sender.pk,
                        body="Bin A-01-03 is full",
                        sent_ms=1_700_000_000_000,
                    )
                    await hub._chat(event)

            loop.run_until_complete(run())
        finally:
            hub._by_user[member.pk].discard(listener)
            hub._names = kept
        assert listener.closed is None
        assert len(listener._frames) == n

    return Op(1, lambda: present(100))


# --- measuring ----------------------------------------------------------------------------------


def _text(values: list[float], fmt: str = "{:.3f}") -> str:
    middle = fmt.format(statistics.median(values))
    return f"{middle} [{fmt.format(min(values))}\N{EN DASH}{fmt.format(max(values))}]"


@dataclass
class Figure:
    """One piece's rounds: wall and CPU milliseconds per operation, with and without it."""

    piece: Piece
    wall: dict[str, list[float]] = field(default_factory=lambda: {"with": [], "without": []})
    cpu: dict[str, list[float]] = field(default_factory=lambda: {"with": [], "without": []})
    counts: dict[str, tuple[float, float]] = field(default_factory=dict)  # with, without

    def add(self, side: str, measured: tuple[float, float]) -> None:
        self.wall[side].append(measured[0])
        self.cpu[side].append(measured[1])

    @staticmethod
    def ratios(figures: dict[str, list[float]]) -> list[float]:
        """Per round, without over with (1.25: the operation takes 25 % more without it)."""
        pairs = zip(figures["with"], figures["without"], strict=True)
        return [without / with_ for with_, without in pairs if with_ > 0]

    @property
    def verdict(self) -> str:
        """ "pays" when the median ratio of CPU time is 1.10 or more (the operation costs at
        least 10 % more without the piece); "not distinguishable" is added when the range of
        the rounds' ratios includes 1.0."""
        ratios = self.ratios(self.cpu)
        found = "pays" if statistics.median(ratios) >= 1.10 else "buys < 10 %"
        if min(ratios) <= 1.0 <= max(ratios):
            found += " (not distinguishable: the range includes 1.0)"
        return found

    def line(self) -> str:
        counts = "; ".join(
            f"{name} {a:g} → {b:g}" for name, (a, b) in self.counts.items() if (a, b) != (0, 0)
        )
        piece = self.piece
        return (
            f"| {piece.name} | {piece.kind} | {piece.row} | {piece.workload} "
            f"| {_text(self.cpu['with'])} | {_text(self.cpu['without'])} "
            f"| {_text(self.ratios(self.cpu), '{:.2f}')} "
            f"| {_text(self.ratios(self.wall), '{:.2f}')} "
            f"| {counts or '—'} | {self.verdict} |"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "piece": self.piece.name,
            "kind": self.piece.kind,
            "row": self.piece.row,
            "wall_ms": self.wall,
            "cpu_ms": self.cpu,
            "cpu_ratios": self.ratios(self.cpu),
            "wall_ratios": self.ratios(self.wall),
            "counts": self.counts,
            "verdict": self.verdict,
        }


def _counts(op: Op) -> tuple[float, float]:
    """Database queries and Redis round trips of one operation."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from benchmarks.probes import wire

    if op.prepare is not None:
        op.prepare()
    op.one()  # as warm as the rounds left it
    if op.prepare is not None:
        op.prepare()
    wire.install()
    wire.reset()
    with CaptureQueriesContext(connection) as queries:
        op.one()
    return float(len(queries)), float(wire.count)


def _rounds(figure: Figure, rounds: int, with_: Callable[[], Any], without: Callable[[], Any]):
    """Both sides once per round, the order alternating; both run once first (warm-up)."""
    with_()
    without()
    for r in range(rounds):
        sides = [("with", with_), ("without", without)]
        for side, measure in sides[:: 1 if r % 2 == 0 else -1]:
            figure.add(side, measure())
    return figure


def measure_in_process(work: Workloads, piece: Piece, rounds: int, meter: Meter) -> Figure:
    op = work.ops[piece.workload]
    patch = WITHOUT[piece.without]

    @contextlib.contextmanager
    def switched_off() -> Iterator[None]:
        work.hub_names["keep"] = piece.without != "names"
        try:
            with patch():
                yield
        finally:
            work.hub_names["keep"] = True

    def without() -> tuple[float, float]:
        with switched_off():
            return run(op, meter)

    figure = _rounds(Figure(piece), rounds, lambda: run(op, meter), without)
    queries_with, trips_with = _counts(op)
    with switched_off():
        queries_without, trips_without = _counts(op)
    figure.counts = {
        "queries": (queries_with, queries_without),
        "round trips": (trips_with, trips_without),
    }
    return figure


# --- row 16 ---------------------------------------------------------------------------------------


def measure_opens(bench: Any, pieces: list[Piece], rounds: int, meter: Meter) -> list[Figure]:
    """Row 16's opens through a server as the product is and one with each piece off."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from benchmarks import server
    from benchmarks.rows_shape import session_cookie
    from subscriptions.models import Warehouse

    count = bench.config.streams
    warehouse = Warehouse.objects.create(code="HS01", name="Benchmark holding streams")
    users = list(User.objects.bulk_create(User(username=f"bench-hold-s-{i}") for i in range(count)))
    tokens = [
        t.key
        for t in Token.objects.bulk_create(Token(user=u, key=Token.generate_key()) for u in users)
    ]
    cookies = [session_cookie(u) for u in users]

    def start(without: str) -> Any:
        port = server.free_port()
        command = server.command("uvicorn", port, bench.config.http_workers)
        command[command.index("benchmarks.asgi:application")] = (
            "benchmarks.holding_asgi:application"
        )
        return server.launch(
            command,
            port=port,
            workers=bench.config.http_workers,
            name=f"uvicorn-{without or 'as-is'}",
            probe="/bench/floor/",
            env={
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
                "BENCH_WITHOUT": without,
            },
        )

    figures = []
    as_is = start("")
    try:
        for piece in pieces:
            other = start(piece.without)
            try:
                opens = _Opens(piece, tokens, cookies, warehouse.pk, meter)
                figure = _rounds(
                    Figure(piece),
                    rounds,
                    partial(opens.run, as_is, "with"),
                    partial(opens.run, other, "without"),
                )
                figure.counts = {
                    "streams refused (503)": (opens.refused["with"], opens.refused["without"])
                }
                figures.append(figure)
            finally:
                other.stop()
            print(figures[-1].line(), flush=True)
    finally:
        as_is.stop()
    return figures


@dataclass
class _Opens:
    """Row 16's opens of one kind (warm, cold or session) against one server."""

    piece: Piece
    tokens: list[str]
    cookies: list[str]
    warehouse_id: int
    meter: Meter
    refused: dict[str, int] = field(default_factory=lambda: {"with": 0, "without": 0})

    def run(self, srv: Any, side: str) -> tuple[float, float]:
        """Wall and CPU milliseconds until every stream got `ready` or was refused (CPU: the
        server's processes and Redis); refusals (a 503) are counted in `refused`."""
        from benchmarks.rows_shape import _requests
        from directory.cache import bump

        kind = self.piece.workload.removeprefix("open ")
        host = f"{srv.host}:{srv.port}"
        path = f"/api/v1/stream/?warehouse={self.warehouse_id}"
        if kind == "session":
            wanted = _requests(path, [{"Cookie": c} for c in self.cookies], host)
        else:
            wanted = _requests(path, [{"Authorization": f"Token {t}"} for t in self.tokens], host)
        if kind == "warm":
            for _ in range(2):  # every worker holds (nearly) every token
                asyncio.run(_open_all(srv.host, srv.port, wanted))
        elif kind == "cold":
            bump()
        self.meter.pids = [srv.process.pid]
        try:
            cpu_before = self.meter.now() - time.process_time()
            wall, refused = asyncio.run(_open_all(srv.host, srv.port, wanted))
            # The server's and Redis's CPU (this process, the client, is the same both ways).
            cpu = self.meter.now() - time.process_time() - cpu_before
        finally:
            self.meter.pids = []
        self.refused[side] += refused
        return wall * 1000, cpu * 1000


async def _open_one(host: str, port: int, request: bytes) -> tuple[float, bool]:
    """Open one stream: when it answered `ready` (True) or was refused (False); left open."""
    reader, writer = await asyncio.open_connection(host, port)
    _OPEN.append(writer)
    writer.write(request)
    seen = b""
    while b"event: ready" not in seen:
        chunk = await reader.read(4096)
        if not chunk:
            return time.perf_counter(), False
        seen += chunk
    return time.perf_counter(), True


_OPEN: list[asyncio.StreamWriter] = []


async def _open_all(host: str, port: int, requests: list[bytes]) -> tuple[float, int]:
    """Seconds until every stream was ready or refused, and how many were refused."""
    started = time.perf_counter()
    try:
        done = await asyncio.wait_for(
            asyncio.gather(*(_open_one(host, port, r) for r in requests)), timeout=300
        )
        return max(at for at, _ in done) - started, sum(1 for _, ready in done if not ready)
    finally:
        for writer in _OPEN:
            writer.close()
        _OPEN.clear()


# --- the command ----------------------------------------------------------------------------------

HEADER = (
    "| piece | kind | row | workload | CPU ms/op with | CPU ms/op without "
    "| CPU without/with | wall without/with | counts per op (with → without) | verdict |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.holding", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--rounds", type=int, default=21, help="rounds per piece (default 21)")
    parser.add_argument("--only", metavar="NAMES", help="pieces by name, comma-separated")
    parser.add_argument("--list", action="store_true", help="list the pieces and exit")
    parser.add_argument("--json", metavar="FILE", help="also write every round as JSON")
    parser.add_argument("--tiny", action="store_true", help="sizes of 10 (the test's)")
    parser.add_argument(
        "--streams", type=int, help="streams opened at once for row 16 (default: quick's 300)"
    )
    args = parser.parse_args(argv)
    pieces = PIECES
    if args.only:
        names = {n.strip() for n in args.only.split(",")}
        pieces = [p for p in PIECES if p.name in names]
        if unknown := names - {p.name for p in pieces}:
            raise SystemExit(f"No piece named {', '.join(sorted(unknown))}: see --list.")
    if args.list:
        for piece in pieces:
            print(f"{piece.name}: {piece.kind}, row {piece.row}, {piece.what}")
        return 0

    from benchmarks.context import PRESETS, Bench
    from benchmarks.probes import RedisProbe

    config = PRESETS["tiny" if args.tiny else "quick"]
    if args.streams:
        config = dataclasses.replace(config, streams=args.streams)
    redis_server = _setup.start(settings="benchmarks.settings")
    try:
        bench = Bench(config=config, redis_url=redis_server.url, probe=RedisProbe(redis_server.url))
        in_process = [p for p in pieces if not p.workload.startswith("open ")]
        streams = [p for p in pieces if p.workload.startswith("open ")]
        work = build(bench, {p.workload for p in in_process})
        meter = Meter(redis_server.url)
        print(HEADER, flush=True)
        figures = []
        for piece in in_process:
            figures.append(measure_in_process(work, piece, args.rounds, meter))
            print(figures[-1].line(), flush=True)
        if streams:
            figures += measure_opens(bench, streams, args.rounds, meter)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump([f.as_dict() for f in figures], out, indent=1)
    finally:
        redis_server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
