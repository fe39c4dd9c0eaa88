"""Redis key names of the delivery objective (SPEC 16). A warehouse's canary keys carry its
hash tag, so the scripts that touch them run in one slot; tests pin these strings."""

from __future__ import annotations

from django.conf import settings

from subscriptions.keys import warehouse_prefix


def sent(warehouse_id: int) -> str:
    """Sorted set: canary token -> when it was published (ms, Redis's clock), the last hour."""
    return f"{warehouse_prefix(warehouse_id)}:canary:sent"


def arrived(warehouse_id: int) -> str:
    """Hash: `<token>:stream` / `<token>:poll` -> ms from publish to arrival on that path."""
    return f"{warehouse_prefix(warehouse_id)}:canary:arrived"


def stream_servers() -> str:
    """Sorted set: each process that serves streams (`<host>:<pid>`) -> its last beat (ms)."""
    return f"{settings.WMS_REDIS_PREFIX}:delivery:streams"


def checked() -> str:
    """String: the last check's JSON ({"at", "late", "missing"}), expiring unless renewed."""
    return f"{settings.WMS_REDIS_PREFIX}:delivery:checked"
