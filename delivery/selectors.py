"""Reads of the delivery objective (SPEC 16): each active warehouse's reading."""

from __future__ import annotations

from subscriptions.models import Warehouse

from . import store
from .objective import Reading, read

# A process that serves streams counts as serving them for this long after its last beat, so
# a stream server that stopped makes its warehouses late (and alarmed) instead of unmeasured.
STREAM_SERVED_WITHIN_MS = store.HOUR_MS
# Warehouses read per round trip.
READ_BATCH = 100


def readings() -> list[tuple[Warehouse, Reading]]:
    """Every active warehouse with its reading, by code."""
    warehouses = list(Warehouse.objects.filter(is_active=True).order_by("code"))
    served = store.stream_servers(stale_ms=STREAM_SERVED_WITHIN_MS) > 0
    found: list[tuple[Warehouse, Reading]] = []
    for start in range(0, len(warehouses), READ_BATCH):
        batch = warehouses[start : start + READ_BATCH]
        windows = store.windows([w.pk for w in batch])
        found += [(w, read(windows[w.pk], stream_served=served)) for w in batch]
    return found
