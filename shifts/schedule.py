"""When a shift runs: pure functions of a shift's local times and its warehouse's time zone.

A shift is a pair of local wall-clock times and the weekdays it starts on. One *occurrence* is
the stretch from `starts` on a day it starts to `ends` on the same day, or on the next day when
`ends` is not after `starts` (a night shift 22:00-06:00; 06:00-06:00 is a 24-hour shift).
Occurrences are half-open, [start, end): at the very instant one ends the next may begin.

Everything is computed in the warehouse's zone with the standard library's `zoneinfo`, and
every answer is an aware datetime in UTC, so daylight-saving changes come out as people expect
from their wall clocks:

- a night shift over the spring change (Europe/Berlin, 2026-03-29) lasts an hour less, over
  the autumn change (2026-10-25) an hour more: it still ends at 06:00 on the clock;
- a start or end in the hour the spring change skips (02:00-03:00 in Berlin on 2026-03-29)
  is taken as that many minutes after the change: a shift starting at 02:30 starts at 03:30
  summer time that day (Python's `fold=0` reading of a time that does not exist);
- a start or end in the hour the autumn change repeats (02:00-03:00 in Berlin on 2026-10-25)
  is its first occurrence, still in summer time (`fold=0`);
- an occurrence that those rules leave empty (starting 02:30 and ending 03:00 on the spring
  change day: 03:30 to 03:00) does not happen that day.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass

UTC = dt.UTC

# A shift lasts at most a day and an hour (a 24-hour shift over the autumn change): an
# occurrence containing an instant started on its local date or the day before.
_LOOK_BACK_DAYS = 1
# Every weekday comes within a week; a couple more days cover occurrences a change left empty.
_LOOK_AHEAD_DAYS = 9


@dataclass(frozen=True)
class ShiftTimes:
    """What the schedule needs of a shift (plain values: cached per process, never a row)."""

    starts: dt.time
    ends: dt.time
    weekdays: tuple[int, ...]  # ISO weekdays of the day it starts; () = every day
    timezone: str  # the warehouse's IANA zone

    @property
    def crosses_midnight(self) -> bool:
        return self.ends <= self.starts


@dataclass(frozen=True, order=True)
class Occurrence:
    """One run of a shift: [start, end), aware datetimes in UTC; `day` is the local date it
    starts on."""

    start: dt.datetime
    end: dt.datetime
    day: dt.date

    def contains(self, at: dt.datetime) -> bool:
        return self.start <= at < self.end


def zone(name: str) -> zoneinfo.ZoneInfo:
    # ZoneInfo(name) gives the same instance for the same name (the standard library keeps it).
    return zoneinfo.ZoneInfo(name)


def _utc(day: dt.date, wall: dt.time, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    # fold=0: a skipped wall time reads with the offset before the change (so it lands that
    # much after it), a repeated one is its first occurrence. See the module docstring.
    local = dt.datetime.combine(day, wall.replace(tzinfo=None, fold=0), tzinfo=tz)
    return local.astimezone(UTC)


def occurrence_on(times: ShiftTimes, day: dt.date) -> Occurrence | None:
    """The occurrence starting on local date `day`, or None when the shift does not start
    that weekday (or the daylight-saving change left it empty)."""
    if times.weekdays and day.isoweekday() not in times.weekdays:
        return None
    tz = zone(times.timezone)
    start = _utc(day, times.starts, tz)
    end_day = day + dt.timedelta(days=1) if times.crosses_midnight else day
    end = _utc(end_day, times.ends, tz)
    if end <= start:
        return None
    return Occurrence(start=start, end=end, day=day)


def _local_date(times: ShiftTimes, at: dt.datetime) -> dt.date:
    _require_aware(at)
    return at.astimezone(zone(times.timezone)).date()


def _occurrences_from(times: ShiftTimes, first: dt.date, days: int) -> Iterator[Occurrence]:
    for offset in range(days):
        found = occurrence_on(times, first + dt.timedelta(days=offset))
        if found is not None:
            yield found


def current(times: ShiftTimes, at: dt.datetime) -> Occurrence | None:
    """The occurrence running at `at` (start <= at < end), or None."""
    today = _local_date(times, at)
    running = [
        o
        for o in _occurrences_from(times, today - dt.timedelta(days=_LOOK_BACK_DAYS), 2)
        if o.contains(at)
    ]
    return max(running) if running else None


def is_running(times: ShiftTimes, at: dt.datetime) -> bool:
    """Whether the shift runs at `at`."""
    return current(times, at) is not None


def next_start(times: ShiftTimes, at: dt.datetime) -> dt.datetime | None:
    """The first start strictly after `at` (UTC), or None (a shift whose every start the
    daylight-saving rules emptied, which takes a contrived shift)."""
    first = _local_date(times, at) - dt.timedelta(days=_LOOK_BACK_DAYS)
    for occurrence in _occurrences_from(times, first, _LOOK_AHEAD_DAYS + 1):
        if occurrence.start > at:
            return occurrence.start
    return None


def ended_between(times: ShiftTimes, after: dt.datetime, until: dt.datetime) -> list[Occurrence]:
    """The occurrences that ended in (after, until], oldest first."""
    if until <= after:
        return []
    # An occurrence ending after `after` started at most a day and an hour before it.
    first = _local_date(times, after) - dt.timedelta(days=_LOOK_BACK_DAYS + 1)
    days = (_local_date(times, until) - first).days + 1
    return [o for o in _occurrences_from(times, first, days) if after < o.end <= until]


def _require_aware(at: dt.datetime) -> None:
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("Shift times are compared with aware datetimes only.")
