"""Times as the API shows them: ISO 8601 in UTC with milliseconds, e.g. 2026-11-21T08:15:02.113Z."""

import time
from datetime import UTC, datetime


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def ms_to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def iso_ms(ms: int) -> str:
    """Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    seconds, millis = divmod(int(ms), 1000)
    return f"{datetime.fromtimestamp(seconds, tz=UTC):%Y-%m-%dT%H:%M:%S}.{millis:03d}Z"
