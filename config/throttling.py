"""API throttling that costs no Redis round trip and no pickling (counters live in the
process's memory)."""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from typing import Any

from rest_framework import throttling

from config.client_address import client_address

# Users whose request times a process keeps; the one idle longest is forgotten first.
USERS_KEPT = 100_000


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user rate limit, counted per server process: DRF's own sliding log (the same
    decisions and the same `Retry-After`), kept as a deque per user in this process.

    DRF keeps the log in a cache, which pickles and unpickles the whole list on every request:
    up to one float per request in the last minute (1,200 at the default rate), a tenth of a
    poll's time in a profile. A local-memory cache also forgets keys beyond its 300 entries.
    """

    num_requests: int  # set by DRF from the rate, as `duration` (seconds)
    duration: int
    _logs: OrderedDict[str, deque[float]] = OrderedDict()
    _lock = threading.Lock()

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        with self._lock:
            log = self._logs.get(self.key)
            if log is None:
                log = self._logs[self.key] = deque()
                if len(self._logs) > USERS_KEPT:
                    self._logs.popitem(last=False)
            else:
                self._logs.move_to_end(self.key)
            # Newest first, as DRF keeps it: its wait() reads it for Retry-After.
            self.history = log  # type: ignore[assignment]
            self.now = self.timer()
            while log and log[-1] <= self.now - self.duration:
                log.pop()
            if len(log) >= self.num_requests:
                return self.throttle_failure()
            log.appendleft(self.now)
            return True

    def get_ident(self, request: Any) -> str:
        """An anonymous client's key: its address as login throttling takes it (TRUSTED_PROXIES).

        DRF's own rule, with NUM_PROXIES unset, keys on the whole X-Forwarded-For of any peer,
        so a client could start a new count with every request by changing the header.
        """
        return client_address(request) or ""

    @classmethod
    def forget_all(cls) -> None:
        """Start every count afresh (tests)."""
        with cls._lock:
            cls._logs.clear()
