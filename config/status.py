"""What this process knows is degraded right now, for /healthz (config/health.py).

Parts of the product that can lose something without failing a request report it here by
name: the stream hub when it has no live pub/sub subscription, publishing when a write was
stored but not acknowledged by REDIS_WAIT_REPLICAS replicas. A flag is cleared by its owner
when the condition ends, or lapses after `seconds` when the owner cannot tell that it ended.
Process-local and thread-safe: the hub runs in the event loop, health checks in threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

_flags: dict[str, tuple[str, float | None]] = {}
_lock = threading.Lock()

# Swapped by tests that move time.
clock: Callable[[], float] = time.monotonic


def flag(name: str, detail: str, *, seconds: float | None = None) -> None:
    """`name` is degraded: `detail` says how (shown in /healthz), until cleared or `seconds`."""
    with _lock:
        _flags[name] = (detail, None if seconds is None else clock() + seconds)


def clear(name: str) -> None:
    with _lock:
        _flags.pop(name, None)


def degraded() -> dict[str, str]:
    """Every flag that holds now: name -> detail."""
    now = clock()
    with _lock:
        for name, (_, until) in list(_flags.items()):
            if until is not None and until <= now:
                del _flags[name]
        return {name: detail for name, (detail, _) in _flags.items()}
