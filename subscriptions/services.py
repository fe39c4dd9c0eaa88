"""Keeping Redis a mirror of the subscription tables: per change, in bulk, and by reconciling."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import Group
from django.db import transaction

from config.redis import REDIS_UNAVAILABLE

from . import store
from .models import MessageType, Subscription, Warehouse, subscriber_id
from .store import Pair

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


def resync_pairs(pairs: Iterable[Pair]) -> None:
    """Rewrite the given pairs' sets from the database."""
    store.replace_subscribers(subscribers_from_database(pairs))


def sync_all() -> SyncReport:
    """Rebuild every set from the database (each warehouse atomically)."""
    started = time.perf_counter()
    desired = subscribers_from_database()
    store.replace_subscribers(desired)
    return _report(desired, repaired=len(desired), started=started)


def reconcile() -> SyncReport:
    """Compare Redis with the database and rewrite only the sets that differ."""
    started = time.perf_counter()
    desired = subscribers_from_database()
    current = store.read_subscribers(desired)
    stale = {pair: members for pair, members in desired.items() if current[pair] != members}
    if stale:
        store.replace_subscribers(stale)
        logger.warning("Repaired %d subscriber sets that differed from the database", len(stale))
    return _report(desired, repaired=len(stale), started=started)


def _report(desired: dict[Pair, set[str]], *, repaired: int, started: float) -> SyncReport:
    return SyncReport(
        warehouses=len({p.warehouse_id for p in desired}),
        sets=sum(1 for members in desired.values() if members),
        subscriptions=sum(len(members) for members in desired.values()),
        repaired=repaired,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


# --- After-commit mirroring -----------------------------------------------------------------
# Changed pairs wait here until the transaction commits. Pairs left behind by a rolled-back
# transaction are flushed with the next commit; that is harmless because a flush copies the
# database's committed truth, never the change itself.
_pending = threading.local()


def schedule_resync(pairs: Iterable[Pair], *, using: str = "default") -> None:
    """Mirror these pairs into Redis once the current transaction commits (at once if none)."""
    if not hasattr(_pending, "pairs"):
        _pending.pairs = set()
    _pending.pairs.update(pairs)
    transaction.on_commit(_flush_pending, using=using)


def _flush_pending() -> None:
    pairs: set[Pair] = getattr(_pending, "pairs", set())
    if not pairs:
        return
    _pending.pairs = set()
    try:
        resync_pairs(pairs)
    except REDIS_UNAVAILABLE as exc:
        # The database change stands; the periodic reconcile repairs Redis when it is back.
        logger.warning(
            "Redis unavailable, %d subscriber sets left to reconcile: %s", len(pairs), exc
        )


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
    users: Sequence[object] = (),
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

    new: list[Subscription] = []
    skipped = 0
    for warehouse in warehouses:
        for message_type in message_types:
            have = existing[(warehouse.pk, message_type.pk)]
            for user in users:
                if subscriber_id(user_id=user.pk) in have:
                    skipped += 1
                else:
                    new.append(
                        Subscription(message_type=message_type, warehouse=warehouse, user=user)
                    )
            for role in roles:
                if subscriber_id(role_id=role.pk) in have:
                    skipped += 1
                else:
                    new.append(
                        Subscription(message_type=message_type, warehouse=warehouse, role=role)
                    )
    Subscription.objects.bulk_create(new)
    # bulk_create sends no post_save signals, so mirror these pairs explicitly.
    schedule_resync({Pair(s.warehouse_id, s.message_type_id) for s in new})
    return BulkResult(created=len(new), existing=skipped)
