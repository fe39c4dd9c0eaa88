"""/healthz's `delivery` (SPEC 16): the warehouses the last check found late or missing, or
that no check ran lately (beat is not running). One Redis GET."""

from __future__ import annotations

from django.conf import settings
from redis.exceptions import RedisError

from config import timestamps

from . import store


def degraded() -> str:
    if settings.CANARY_INTERVAL_SECONDS <= 0:
        return ""
    try:
        found = store.last_check()
    except RedisError:
        return ""  # /healthz says `redis` already
    if found is None:
        return ""  # never checked here: nothing to say yet
    parts = []
    if found.get("late"):
        parts.append("late: " + ", ".join(found["late"]))
    if found.get("missing"):
        parts.append("missing: " + ", ".join(found["missing"]))
    stale_ms = 3 * max(settings.DELIVERY_CHECK_SECONDS, settings.CANARY_INTERVAL_SECONDS) * 1000
    if timestamps.now_ms() - int(found.get("at", 0)) > stale_ms:
        parts.append("not checked lately (is Celery beat running?)")
    return "; ".join(parts)
