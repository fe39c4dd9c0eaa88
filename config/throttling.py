"""API throttling that costs no Redis round trip (counters live in the process's memory)."""

from django.core.cache import caches
from rest_framework import throttling


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user rate limit, counted per server process (settings.CACHES["throttle"])."""

    cache = caches["throttle"]
