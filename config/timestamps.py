"""The product's one clock, and times as the API shows them (ISO 8601 in UTC with
milliseconds, e.g. 2026-11-21T08:15:02.113Z).

Everything that stamps or compares product time calls `timestamps.now_ms()` through the
module (never `from config.timestamps import now_ms`, which would copy the function), so a
test moves time everywhere at once by replacing this one attribute (the `clock` fixture).
Durations (timeouts, elapsed times) use `time.monotonic()` instead: they are not product time.
"""

import time
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def now_ms() -> int:
    """Milliseconds since the epoch: the product's clock (the seam tests replace)."""
    return time.time_ns() // 1_000_000


def now() -> datetime:
    """The product's clock as an aware datetime in UTC (for database columns)."""
    return ms_to_datetime(now_ms())


def ms_to_datetime(ms: int) -> datetime:
    # Adding a timedelta keeps the milliseconds exact; fromtimestamp(ms / 1000) can round.
    return EPOCH + timedelta(milliseconds=int(ms))


def iso(value: datetime) -> str:
    """A datetime as `YYYY-MM-DDTHH:MM:SS.mmmZ` (in UTC)."""
    value = value.astimezone(UTC)
    return f"{value:%Y-%m-%dT%H:%M:%S}.{value.microsecond // 1000:03d}Z"


def iso_ms(ms: int) -> str:
    """Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (what `iso` gives). Every
    answer shows each notification's times, so the text of the last SECONDS_KEPT seconds is
    kept (a page's notifications share a few): a second's text never changes."""
    second, milliseconds = divmod(int(ms), 1000)
    head = _seconds.get(second)
    if head is None:
        value = EPOCH + timedelta(seconds=second)
        head = value.isoformat(timespec="seconds")[:-6] + "."  # "+00:00" -> "."
        if len(_seconds) >= SECONDS_KEPT:
            _seconds.clear()  # simpler than an LRU, and a miss only costs one formatting
        _seconds[second] = head
    return f"{head}{milliseconds:03d}Z"


# iso_ms's memory, per process: a second's text, about 100 bytes each.
SECONDS_KEPT = 4096
_seconds: dict[int, str] = {}
