"""Times as the API shows them: ISO 8601 in UTC with milliseconds, e.g. 2026-11-21T08:15:02.113Z."""

import time
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def ms_to_datetime(ms: int) -> datetime:
    # Adding a timedelta keeps the milliseconds exact; fromtimestamp(ms / 1000) can round.
    return EPOCH + timedelta(milliseconds=int(ms))


def iso(value: datetime) -> str:
    """A datetime as `YYYY-MM-DDTHH:MM:SS.mmmZ` (in UTC)."""
    value = value.astimezone(UTC)
    return f"{value:%Y-%m-%dT%H:%M:%S}.{value.microsecond // 1000:03d}Z"


def iso_ms(ms: int) -> str:
    """Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    return iso(ms_to_datetime(ms))
