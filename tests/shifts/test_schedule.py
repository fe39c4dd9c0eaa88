"""The schedule's pure functions: weekdays, midnight, and the daylight-saving changes of
Europe/Berlin (2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST -> 02:00 CET)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shifts import schedule
from shifts.schedule import ShiftTimes

BERLIN = "Europe/Berlin"
UTC = dt.UTC


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, tzinfo=UTC)


def times(starts: str, ends: str, weekdays: tuple[int, ...] = (), tz: str = BERLIN) -> ShiftTimes:
    return ShiftTimes(
        starts=dt.time.fromisoformat(starts),
        ends=dt.time.fromisoformat(ends),
        weekdays=weekdays,
        timezone=tz,
    )


def test_a_day_shift_in_winter_and_summer_follows_the_wall_clock() -> None:
    day = times("06:00", "14:00")
    winter = schedule.current(day, utc(2026, 1, 14, 6, 0))  # 07:00 CET
    assert winter is not None
    assert (winter.start, winter.end) == (utc(2026, 1, 14, 5), utc(2026, 1, 14, 13))
    summer = schedule.current(day, utc(2026, 7, 14, 6, 0))  # 08:00 CEST
    assert summer is not None
    assert (summer.start, summer.end) == (utc(2026, 7, 14, 4), utc(2026, 7, 14, 12))
    assert not schedule.is_running(day, utc(2026, 7, 14, 12))  # the end is not part of it
    assert schedule.is_running(day, utc(2026, 7, 14, 4))  # the start is


def test_a_night_shift_crosses_midnight_and_belongs_to_the_day_it_starts() -> None:
    # Monday to Friday nights: Friday 22:00 to Saturday 06:00 runs, Saturday night does not.
    night = times("22:00", "06:00", weekdays=(1, 2, 3, 4, 5))
    friday_night = schedule.current(night, utc(2026, 1, 17, 2))  # Saturday 03:00 CET
    assert friday_night is not None
    assert friday_night.day == dt.date(2026, 1, 16)
    assert (friday_night.start, friday_night.end) == (utc(2026, 1, 16, 21), utc(2026, 1, 17, 5))
    assert not schedule.is_running(night, utc(2026, 1, 18, 2))  # Sunday 03:00: Saturday night
    # Sunday night is off too, so after Saturday morning the next start is Monday 22:00.
    assert schedule.next_start(night, utc(2026, 1, 17, 5)) == utc(2026, 1, 19, 21)


@pytest.mark.parametrize(
    ("at", "start", "end", "hours"),
    [
        # 01:30 CET; 22:00 CET to 06:00 CEST: an hour shorter.
        pytest.param(
            utc(2026, 3, 29, 0, 30),
            utc(2026, 3, 28, 21),
            utc(2026, 3, 29, 4),
            7,
            id="spring-an-hour-shorter",
        ),
        # 02:30 the second time; 22:00 CEST to 06:00 CET: an hour longer.
        pytest.param(
            utc(2026, 10, 25, 1, 30),
            utc(2026, 10, 24, 20),
            utc(2026, 10, 25, 5),
            9,
            id="autumn-an-hour-longer",
        ),
    ],
)
def test_a_night_shift_over_a_daylight_saving_change(
    at: dt.datetime, start: dt.datetime, end: dt.datetime, hours: int
) -> None:
    night = times("22:00", "06:00")
    occurrence = schedule.current(night, at)
    assert occurrence is not None
    assert occurrence.start == start
    assert occurrence.end == end
    assert occurrence.end - occurrence.start == dt.timedelta(hours=hours)


def test_a_start_in_the_skipped_hour_starts_that_long_after_the_change() -> None:
    # 02:30 does not exist in Berlin on 2026-03-29: the shift starts at 03:30 CEST (01:30 UTC),
    # as documented in shifts/schedule.py; the day before and after it starts at 02:30.
    shift = times("02:30", "10:00")
    assert schedule.next_start(shift, utc(2026, 3, 28, 12)) == utc(2026, 3, 29, 1, 30)
    assert schedule.next_start(shift, utc(2026, 3, 27, 12)) == utc(2026, 3, 28, 1, 30)  # CET
    assert schedule.next_start(shift, utc(2026, 3, 29, 12)) == utc(2026, 3, 30, 0, 30)  # CEST
    assert not schedule.is_running(shift, utc(2026, 3, 29, 1, 15))  # 03:15 CEST: not yet
    assert schedule.is_running(shift, utc(2026, 3, 29, 1, 30))


def test_an_occurrence_the_spring_change_empties_does_not_happen() -> None:
    # 02:30 -> 03:00: on the change day it would run from 03:30 to 03:00, so it does not run.
    shift = times("02:30", "03:00")
    assert schedule.occurrence_on(shift, dt.date(2026, 3, 29)) is None
    assert schedule.next_start(shift, utc(2026, 3, 28, 12)) == utc(2026, 3, 30, 0, 30)
    ended = schedule.ended_between(shift, utc(2026, 3, 28, 12), utc(2026, 3, 30, 12))
    assert [o.day for o in ended] == [dt.date(2026, 3, 30)]


def test_a_start_in_the_repeated_hour_is_its_first_occurrence() -> None:
    shift = times("02:30", "10:00")
    assert schedule.next_start(shift, utc(2026, 10, 24, 12)) == utc(2026, 10, 25, 0, 30)  # CEST


def test_a_24_hour_shift_hands_over_to_itself() -> None:
    allday = times("06:00", "06:00")
    at = utc(2026, 1, 14, 5)  # 06:00 CET: one ends, the next starts
    occurrence = schedule.current(allday, at)
    assert occurrence is not None
    assert occurrence.start == at
    assert occurrence.end - occurrence.start == dt.timedelta(hours=24)
    ended = schedule.ended_between(allday, at - dt.timedelta(minutes=1), at)
    assert [o.end for o in ended] == [at]


def test_ended_between_lists_each_end_once_across_consecutive_windows() -> None:
    night = times("22:00", "06:00", weekdays=(5, 6))  # Friday and Saturday nights
    start = utc(2026, 10, 20)
    ends: list[dt.datetime] = []
    at = start
    while at < utc(2026, 11, 3):
        later = at + dt.timedelta(minutes=37)
        ends.extend(o.end for o in schedule.ended_between(night, at, later))
        at = later
    assert ends == [
        utc(2026, 10, 24, 4),  # Saturday 06:00 CEST
        utc(2026, 10, 25, 5),  # Sunday 06:00 CET (after the change)
        utc(2026, 10, 31, 5),
        utc(2026, 11, 1, 5),
    ]


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        schedule.is_running(times("06:00", "14:00"), dt.datetime(2026, 1, 1, 8))  # noqa: DTZ001


ZONES = st.sampled_from(["Europe/Berlin", "America/New_York", "Australia/Sydney", "UTC"])
MINUTES = st.integers(min_value=0, max_value=24 * 60 - 1)


@settings(deadline=None)  # a first call may pay for loading a zone's data
@given(
    zone=ZONES,
    starts=MINUTES,
    ends=MINUTES,
    weekdays=st.sets(st.integers(1, 7)),
    at_minutes=st.integers(min_value=0, max_value=400 * 24 * 60),
)
def test_schedule_agrees_with_a_minute_by_minute_reference(
    zone: str, starts: int, ends: int, weekdays: set[int], at_minutes: int
) -> None:
    """Reference: walk the local wall clock; the shift runs at an instant when its local time
    falls in [starts, ends) of a day it starts (or, crossing midnight, in the morning after).
    Instants in a changed hour are left out: the reference has no opinion there."""
    shift = ShiftTimes(
        starts=dt.time(starts // 60, starts % 60),
        ends=dt.time(ends // 60, ends % 60),
        weekdays=tuple(sorted(weekdays)),
        timezone=zone,
    )
    at = utc(2026, 1, 1) + dt.timedelta(minutes=at_minutes)
    tz = schedule.zone(zone)
    local = at.astimezone(tz)
    # Skip instants within 2 hours of an offset change: there wall time is not monotonic.
    around = [local + dt.timedelta(hours=h) for h in (-26, -2, 2)]
    if len({a.astimezone(tz).utcoffset() for a in [*around, local]}) > 1:
        return
    minute = local.hour * 60 + local.minute

    def starts_on(day: dt.date) -> bool:
        return not weekdays or day.isoweekday() in weekdays

    today, yesterday = local.date(), local.date() - dt.timedelta(days=1)
    if starts < ends:
        expected = starts_on(today) and starts <= minute < ends
    else:
        expected = (starts_on(today) and minute >= starts) or (
            starts_on(yesterday) and minute < ends
        )
    assert schedule.is_running(shift, at) == expected
    upcoming = schedule.next_start(shift, at)
    assert upcoming is not None
    assert upcoming > at
    assert upcoming - at <= dt.timedelta(days=8)
    assert schedule.ended_between(shift, at, upcoming) == [
        o for o in schedule.ended_between(shift, at - dt.timedelta(days=3), upcoming) if o.end > at
    ]
