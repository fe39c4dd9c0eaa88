"""Nothing left behind forever: notification data of deleted warehouses, users, roles and message
types, and the warehouse keys of owners a feature app knows (rules) (SPEC.md section 10).

Deleting a warehouse or a user queues a task after commit (`warehouse_purge`, `user_forget`);
`sweep_orphans` is the periodic backstop (Celery beat, `manage.py sweep_orphans`): it walks
every warehouse key with SCAN, in bounded steps, and removes what the database no longer owns.
A feature app whose warehouse keys have an owner of its own (config.keyfamilies' owner kinds,
such as "rule") says which owners still exist with `add_owner_check`.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, fields

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from config.orphans import existing_ids
from subscriptions.models import MessageType, Warehouse

from . import cleanup_store, keys

logger = logging.getLogger(__name__)

# A progress line every this many SCAN pages, so a long sweep shows it is moving.
_PROGRESS_EVERY = 100

# Owner kind -> which of these owner ids still exist: added by the feature apps that own such
# keys, in their AppConfig.ready() (the rules app adds "rule"). A kind no app checks is left
# alone (removed with its warehouse only).
OwnerCheck = Callable[[set[str]], set[str]]
_owner_checks: dict[str, OwnerCheck] = {}


def add_owner_check(kind: str, existing: OwnerCheck) -> None:
    _owner_checks[kind] = existing


@dataclass(frozen=True)
class CleanupReport:
    keys: int = 0  # keys removed (whole warehouses, users' inboxes and marks, types, rules)
    warehouses: int = 0  # deleted warehouses whose keys were found

    def __add__(self, other: CleanupReport) -> CleanupReport:
        return CleanupReport(
            *(getattr(self, f.name) + getattr(other, f.name) for f in fields(self))
        )

    def __str__(self) -> str:
        return (
            f"removed {self.keys} keys (of {self.warehouses} deleted warehouses, deleted users, "
            f"roles, message types and rules)"
        )


def warehouse_purge(warehouse_id: int, *, batch: int | None = None) -> CleanupReport:
    """Remove every key of a deleted warehouse (SCAN MATCH of its tag, UNLINK a page at a
    time). A warehouse the database still has is left alone."""
    if Warehouse.objects.filter(pk=warehouse_id).exists():
        return CleanupReport()
    batch = batch or settings.ORPHAN_SWEEP_BATCH
    removed = 0
    for page in cleanup_store.scan_keys(keys.warehouse_pattern(warehouse_id), batch):
        removed += cleanup_store.remove_keys({warehouse_id: page})
    return CleanupReport(keys=removed, warehouses=1 if removed else 0)


def user_forget(user_id: int) -> CleanupReport:
    """Remove a deleted user's own inbox, and their fields of the users hash and snoozes
    (forget_reader.lua), in every warehouse."""
    warehouse_ids = sorted(Warehouse.objects.values_list("pk", flat=True))
    removed = 0
    for start in range(0, len(warehouse_ids), settings.ORPHAN_SWEEP_BATCH):
        chunk = warehouse_ids[start : start + settings.ORPHAN_SWEEP_BATCH]
        removed += cleanup_store.forget_user(chunk, user_id)
    return CleanupReport(keys=removed)


def sweep_orphans(*, batch: int | None = None) -> CleanupReport:
    """Walk every warehouse key with SCAN (`batch` keys a call, default ORPHAN_SWEEP_BATCH) and
    remove the keys of warehouses the database no longer has, and within live warehouses the
    inboxes and read marks of deleted users, inboxes of deleted roles, subscriber sets of
    deleted message types, and keys whose owner an app's check no longer finds (rules)."""
    batch = batch or settings.ORPHAN_SWEEP_BATCH
    report = CleanupReport()
    gone_warehouses: set[int] = set()
    for pages, page in enumerate(
        cleanup_store.scan_keys(keys.every_warehouse_pattern(), batch), start=1
    ):
        report += _sweep_page(page, gone_warehouses)
        if pages % _PROGRESS_EVERY == 0:
            logger.info("Notification orphan sweep: %d pages so far: %s", pages, report)
    report += CleanupReport(warehouses=len(gone_warehouses))
    return report + _sweep_read_model_users(batch)


def _sweep_read_model_users(batch: int) -> CleanupReport:
    """Deleted users' fields in each live warehouse's users hash (bounded HSCAN pages): a user
    who read only through roles left no key of their own for the walk above to find."""
    users = get_user_model()
    for warehouse_id in Warehouse.objects.values_list("pk", flat=True):
        cursor = 0
        while True:
            cursor, found = cleanup_store.user_ids_in_read_model(
                warehouse_id, cursor=cursor, count=batch
            )
            gone = found - existing_ids(users, found)
            if gone:
                cleanup_store.remove_keys({}, {warehouse_id: sorted(gone)})
            if cursor == 0:
                break
    return CleanupReport()


def _sweep_page(page: list[str], gone_warehouses: set[int]) -> CleanupReport:
    parsed = [(key, found) for key in page if (found := keys.parse_warehouse_key(key))]
    if not parsed:
        return CleanupReport()
    owners: dict[str, set[str]] = defaultdict(set)
    for _key, found in parsed:
        owners[found.kind].add(found.owner)
    warehouses = existing_ids(Warehouse, (found.warehouse_id for _k, found in parsed))
    users = existing_ids(get_user_model(), map(int, owners["user"]))
    roles = existing_ids(Group, map(int, owners["role"]))
    types = existing_ids(MessageType, map(int, owners["type"]))
    others = {kind: check(owners[kind]) for kind, check in _owner_checks.items() if owners[kind]}

    def orphaned(found: keys.WarehouseKey) -> bool:
        if found.warehouse_id not in warehouses:
            gone_warehouses.add(found.warehouse_id)
            return True
        owner = found.owner
        return (
            (found.kind == "user" and int(owner) not in users)
            or (found.kind == "role" and int(owner) not in roles)
            or (found.kind == "type" and int(owner) not in types)
            or (found.kind in others and owner not in others[found.kind])
        )

    doomed: dict[int, list[str]] = defaultdict(list)
    readers: dict[int, list[int]] = defaultdict(list)
    for key, found in parsed:
        if orphaned(found):
            doomed[found.warehouse_id].append(key)
            if found.kind == "user" and found.warehouse_id in warehouses:
                readers[found.warehouse_id].append(int(found.owner))
    return CleanupReport(keys=cleanup_store.remove_keys(doomed, readers) if doomed else 0)
