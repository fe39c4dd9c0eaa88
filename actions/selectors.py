"""Reads of alert actions for the admin: do the recent alerts of a type carry the key an action
asks to scan (SPEC 14, "Outcomes on the page")?"""

from __future__ import annotations

from dataclasses import dataclass

from notifications import store
from subscriptions.models import Subscription

from .catalog import scannable

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
