"""When the work in hand must be over: a deadline that the code which starts some work sets,
and the outbound clients under it keep (outbound/mail.py, outbound/http.py).

The outbox sets one for each attempt, shorter than the attempt's lease, so that no send
outlives the lease and is taken over by another worker while it still goes on. The deadline
belongs to the thread (a context variable) and is on `time.monotonic()`'s clock.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

_until: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


@contextmanager
def within(seconds: float, *, since: float | None = None) -> Iterator[None]:
    """The work inside must be over `seconds` after `since` (a `time.monotonic()` reading;
    default now), or earlier if an enclosing deadline says so."""
    until = (time.monotonic() if since is None else since) + seconds
    outer = _until.get()
    token = _until.set(until if outer is None else min(outer, until))
    try:
        yield
    finally:
        _until.reset(token)


def left() -> float | None:
    """Seconds left until the deadline (0 or less: passed); None when there is none."""
    until = _until.get()
    return None if until is None else until - time.monotonic()
