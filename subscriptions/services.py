"""Keeping Redis a mirror of the subscription tables: per change, in bulk, and by reconciling."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import Group
from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from config import timestamps
from config.redis import REDIS_UNAVAILABLE
from config.users import User

from . import store
from .models import MessageType, Subscription, Warehouse, subscriber_id
from .store import Outcome, Pair

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyncReport:
    warehouses: int
    sets: int
    subscriptions: int
    repaired: int
    elapsed_ms: float

    def __str__(self) -> str:
        return (
            f"{self.subscriptions} subscriptions in {self.sets} Redis sets across "
            f"{self.warehouses} warehouses; {self.repaired} sets written "
            f"({self.elapsed_ms:.0f} ms)"
        )


def subscribers_from_database(pairs: Iterable[Pair] | None = None) -> dict[Pair, set[str]]:
    """What Redis should hold: every pair asked for (all pairs if None), empty ones included."""
    queryset = Subscription.objects.all()
    if pairs is None:
        wanted = {
            Pair(w, t)
            for w in Warehouse.objects.values_list("id", flat=True)
            for t in MessageType.objects.values_list("id", flat=True)
        }
    else:
        wanted = set(pairs)
        queryset = queryset.filter(
            warehouse_id__in={p.warehouse_id for p in wanted},
            message_type_id__in={p.message_type_id for p in wanted},
        )
    desired: dict[Pair, set[str]] = {pair: set() for pair in wanted}
    rows = queryset.values_list("warehouse_id", "message_type_id", "user_id", "role_id")
    for warehouse_id, message_type_id, user_id, role_id in rows.iterator():
        pair = Pair(warehouse_id, message_type_id)
        if pair in desired:
            desired[pair].add(subscriber_id(user_id=user_id, role_id=role_id))
    return desired


def resync_pairs(pairs: Iterable[Pair]) -> int:
    """Copy the given pairs from the database into Redis, in order; returns the sets written."""
    return _mirror(pairs)[1]


def _mirror(pairs: Iterable[Pair], *, attempts: int = 3) -> tuple[dict[Pair, set[str]], int]:
    """Copy pairs from the database into Redis; returns what was read and how many were written.

    Each pair's version is taken before the database is read and the write lands only while
    it is the newest, so of two writers racing (two admins saving, a save and the reconcile)
    the state read last is the one that stays. A pair whose counter vanished meanwhile (Redis
    emptied) is read and written again, at most `attempts` times in all.
    """
    pending = set(pairs)
    # A pair whose warehouse or type is gone (deleted, or named by a rolled-back transaction)
    # has nothing to mirror: its keys go, and nothing is written that would outlive it.
    gone = pending - existing_pairs(pending)
    if gone:
        store.forget_pairs(gone)
        pending -= gone
    read: dict[Pair, set[str]] = {}
    written = 0
    for _ in range(attempts):
        if not pending:
            break
        versions = store.take_versions(pending)
        desired = subscribers_from_database(pending)
        read.update(desired)
        outcomes = store.replace_subscribers(desired, versions)
        written += sum(1 for outcome in outcomes.values() if outcome is Outcome.WRITTEN)
        pending = {pair for pair, outcome in outcomes.items() if outcome is Outcome.LOST}
    if pending:
        logger.warning(
            "%d subscriber sets lost their version again; reconcile repairs them", len(pending)
        )
    return read, written


def existing_pairs(pairs: Iterable[Pair]) -> set[Pair]:
    """The pairs whose warehouse and message type both still exist."""
    pairs = set(pairs)
    warehouses = set(
        Warehouse.objects.filter(id__in={p.warehouse_id for p in pairs}).values_list(
            "id", flat=True
        )
    )
    types = set(
        MessageType.objects.filter(id__in={p.message_type_id for p in pairs}).values_list(
            "id", flat=True
        )
    )
    return {p for p in pairs if p.warehouse_id in warehouses and p.message_type_id in types}


def all_pairs(
    warehouse_ids: Iterable[int] | None = None, message_type_ids: Iterable[int] | None = None
) -> set[Pair]:
    """Every (warehouse, message type) pair, of the given warehouses (types) or of all."""
    warehouses = Warehouse.objects.all()
    if warehouse_ids is not None:
        warehouses = warehouses.filter(id__in=list(warehouse_ids))
    types = MessageType.objects.all()
    if message_type_ids is not None:
        types = types.filter(id__in=list(message_type_ids))
    type_ids = list(types.values_list("id", flat=True))
    return {Pair(w, t) for w in warehouses.values_list("id", flat=True) for t in type_ids}


# How long the mark of a rebuild in progress stays if its process dies half-way.
REBUILD_MARK_SECONDS = 120


@contextmanager
def rebuilding(what: str) -> Iterator[None]:
    """Marks the mirror as being rebuilt (for /healthz) while the block runs; the mark stays,
    until it expires, when the block fails: the mirror is still not whole."""
    since = timestamps.ms_to_datetime(timestamps.now_ms()).isoformat(timespec="seconds")
    with contextlib.suppress(*REDIS_UNAVAILABLE):  # the rebuild itself will fail and say so
        store.mark_rebuilding(f"{what} since {since}", seconds=REBUILD_MARK_SECONDS)
    yield
    with contextlib.suppress(*REDIS_UNAVAILABLE):
        store.mark_rebuilding(None)


def sync_all() -> SyncReport:
    """Rebuild every set from the database (each warehouse atomically)."""
    started = time.perf_counter()
    with rebuilding("every warehouse"):
        desired, written = _mirror(all_pairs())
    return _report(desired, repaired=written, started=started)


def reconcile() -> SyncReport:
    """Compare Redis with the database and rewrite what publishing could not rely on.

    A pair is rewritten when its members differ, its token is missing (the pair is not
    mirrored: Redis emptied, the token evicted) or its token's count differs from the set's
    size (the set lost members). Only those pairs are read again and written, in order.
    """
    started = time.perf_counter()
    desired = subscribers_from_database()
    current = store.read_mirror(desired)
    stale = {
        pair
        for pair, members in desired.items()
        if not current[pair].whole or current[pair].members != members
    }
    repaired = 0
    if stale:
        with rebuilding(f"{len(stale)} subscriber sets"):
            repaired = resync_pairs(stale)
        logger.warning("Repaired %d subscriber sets that differed from the database", len(stale))
    return _report(desired, repaired=repaired, started=started)


# Publishing that finds a pair not mirrored rebuilds its warehouse; threads of one process
# that find it at the same time wait for one rebuild instead of each reading the database.
_rebuild_locks: defaultdict[int, threading.Lock] = defaultdict(threading.Lock)
_rebuild_locks_guard = threading.Lock()


def rebuild_warehouse(warehouse_id: int, *, skip: frozenset[Pair] = frozenset()) -> None:
    """Mirror every pair of one warehouse from the database (publishing found one missing),
    but those in `skip` (pairs whose rows the caller's open transaction changed: Redis must
    not hold what may yet be rolled back)."""
    with _rebuild_locks_guard:
        lock = _rebuild_locks[warehouse_id]
    if not lock.acquire(blocking=False):
        with lock:  # another thread is rebuilding it right now: its result will do
            return
    try:
        with rebuilding(f"warehouse {warehouse_id}"):
            written = resync_pairs(all_pairs([warehouse_id]) - skip)
        logger.warning(
            "Subscriber sets of warehouse %s were missing from Redis; rebuilt %d from the database",
            warehouse_id,
            written,
        )
    finally:
        lock.release()


def _report(desired: dict[Pair, set[str]], *, repaired: int, started: float) -> SyncReport:
    return SyncReport(
        warehouses=len({p.warehouse_id for p in desired}),
        sets=sum(1 for members in desired.values() if members),
        subscriptions=sum(len(members) for members in desired.values()),
        repaired=repaired,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


# --- After-commit mirroring -----------------------------------------------------------------
# Changed pairs wait in an on-commit callback of the transaction that changed them, so Django
# drops them with it: a rolled-back savepoint or transaction leaves no pair behind, and the
# callbacks still queued are exactly the pairs the open transaction changed.


class _Resync:
    """The on-commit callback that mirrors the pairs changed at one savepoint level."""

    def __init__(self) -> None:
        self.pairs: set[Pair] = set()

    def __call__(self) -> None:
        try:
            resync_pairs(self.pairs)
        except REDIS_UNAVAILABLE as exc:
            # The database change stands; the periodic reconcile repairs Redis when it is back.
            logger.warning(
                "Redis unavailable, %d subscriber sets left to reconcile: %s", len(self.pairs), exc
            )


def _queued(connection: BaseDatabaseWrapper) -> list[_Resync]:
    """The resyncs waiting for the connection's open transaction to commit, oldest first."""
    # run_on_commit holds (savepoint ids, callback, robust) per callback, the rolled-back
    # ones already removed; captureOnCommitCallbacks reads it too.
    return [entry[1] for entry in connection.run_on_commit if isinstance(entry[1], _Resync)]


def schedule_resync(pairs: Iterable[Pair], *, using: str = "default") -> None:
    """Mirror these pairs into Redis once the current transaction commits (at once if none)."""
    connection = transaction.get_connection(using)
    if connection.in_atomic_block and connection.run_on_commit:
        savepoint_ids, last, *_ = connection.run_on_commit[-1]
        if isinstance(last, _Resync) and savepoint_ids == set(connection.savepoint_ids):
            last.pairs.update(pairs)  # one resync per savepoint level, not one per row
            return
    resync = _Resync()
    resync.pairs.update(pairs)
    transaction.on_commit(resync, using=using)


def uncommitted_pairs(*, using: str = "default") -> frozenset[Pair]:
    """Pairs changed in this thread's open transaction (they are mirrored at its commit): their
    rows as this connection reads them may be rolled back. Empty outside a transaction (and in
    the transaction a test case wraps around each test, which never commits)."""
    connection = transaction.get_connection(using)
    if not any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks):
        return frozenset()
    return frozenset(pair for resync in _queued(connection) for pair in resync.pairs)


# --- Bulk subscribing (admin) -------------------------------------------------------------------


@dataclass(frozen=True)
class BulkResult:
    created: int
    existing: int


@transaction.atomic
def subscribe_many(
    *,
    message_types: Sequence[MessageType],
    warehouses: Sequence[Warehouse],
    users: Sequence[User] = (),
    roles: Sequence[Group] = (),
) -> BulkResult:
    """Subscribe every user and role to every message type in every warehouse.

    Combinations that already exist are kept as they are.
    """
    existing: dict[tuple[int, int], set[str]] = defaultdict(set)
    rows = Subscription.objects.filter(
        message_type__in=message_types, warehouse__in=warehouses
    ).values_list("warehouse_id", "message_type_id", "user_id", "role_id")
    for warehouse_id, type_id, user_id, role_id in rows:
        existing[(warehouse_id, type_id)].add(subscriber_id(user_id=user_id, role_id=role_id))

    # Each subscriber once: its id in Redis, and the fields that name it on a Subscription.
    subscribers: list[tuple[str, dict[str, Any]]] = [
        *((subscriber_id(user_id=user.pk), {"user": user}) for user in users),
        *((subscriber_id(role_id=role.pk), {"role": role}) for role in roles),
    ]
    new: list[Subscription] = []
    skipped = 0
    for warehouse in warehouses:
        for message_type in message_types:
            have = existing[(warehouse.pk, message_type.pk)]
            for sid, who in subscribers:
                if sid in have:
                    skipped += 1
                else:
                    new.append(Subscription(message_type=message_type, warehouse=warehouse, **who))
    Subscription.objects.bulk_create(new)
    # bulk_create sends no post_save signals, so mirror these pairs explicitly.
    schedule_resync({Pair(s.warehouse_id, s.message_type_id) for s in new})
    return BulkResult(created=len(new), existing=skipped)
