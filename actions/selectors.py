"""Reads of alert actions: an alert's runs, the live run of an action on an alert, and, for the
admin, whether the recent alerts of a type carry the key an action asks to scan (SPEC 14,
"Outcomes on the page")."""

from __future__ import annotations

from dataclasses import dataclass

from config.users import User
from notifications import lifecycle, store
from subscriptions.models import Subscription

from .catalog import scannable
from .models import ActionRun, RunStatus

# A run that stands: while one is pending or succeeded, pressing the action again answers it.
LIVE = (RunStatus.PENDING, RunStatus.SUCCEEDED)

# Bounded: the newest stored notifications of at most this many warehouses receiving the type,
# this many of each, and of those the newest of the type.
WAREHOUSES_LOOKED_AT = 20
PER_WAREHOUSE = 200
ALERTS_LOOKED_AT = 20


@dataclass(frozen=True)
class FieldCoverage:
    """Of the `looked_at` most recent alerts of a type found, how many lack the field."""

    looked_at: int
    lacking: int


def field_coverage(*, type_code: str, field: str) -> FieldCoverage:
    """How many of the most recent alerts of the type (at most ALERTS_LOOKED_AT, from the
    warehouses that receive it) have nothing in their data to scan for `field`."""
    warehouse_ids = list(
        Subscription.objects.filter(message_type__code=type_code)
        .order_by("warehouse_id")
        .values_list("warehouse_id", flat=True)
        .distinct()[:WAREHOUSES_LOOKED_AT]
    )
    found = [
        note
        for note in store.recent_contents(warehouse_ids, per_warehouse=PER_WAREHOUSE)
        if note.get("message_type") == type_code
    ]
    found.sort(key=lambda note: note.get("created_at_ms", 0), reverse=True)
    recent = found[:ALERTS_LOOKED_AT]
    lacking = sum(1 for note in recent if scannable(note.get("data") or {}, field) is None)
    return FieldCoverage(looked_at=len(recent), lacking=lacking)


def live_run(action_id: int, warehouse_id: int, notification_id: str) -> ActionRun | None:
    return (
        ActionRun.objects.select_related("action", "message")
        .filter(
            action_id=action_id,
            warehouse_id=warehouse_id,
            notification_id=notification_id,
            status__in=LIVE,
        )
        .first()
    )


def runs_of(
    *, user: User, warehouse_id: int, notification_id: str, limit: int = 50
) -> list[ActionRun]:
    """The runs of every action on the alert, newest first; NotVisible (404) when the user
    cannot see it."""
    lifecycle.peek(user=user, warehouse_id=warehouse_id, notification_id=notification_id)
    return list(
        ActionRun.objects.select_related("action", "message")
        .filter(warehouse_id=warehouse_id, notification_id=str(notification_id))
        .order_by("-created_at")[:limit]
    )
