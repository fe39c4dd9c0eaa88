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
    """Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (what `iso` gives), made
    without strftime: every answer shows each notification's times."""
    value = EPOCH + timedelta(milliseconds=int(ms))
    return value.isoformat(timespec="milliseconds")[:-6] + "Z"  # "+00:00" -> "Z"
