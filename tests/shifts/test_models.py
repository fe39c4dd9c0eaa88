"""Validation of shifts and of the warehouse's time zone."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError

from shifts.models import Shift
from subscriptions.models import Warehouse

pytestmark = pytest.mark.django_db


def make(warehouse, role, **fields) -> Shift:
    values = {
        "warehouse": warehouse,
        "role": role,
        "name": "Early",
        "starts": dt.time(6),
        "ends": dt.time(14),
        **fields,
    }
    return Shift(**values)


def test_a_new_warehouse_takes_the_settings_zone_and_a_bad_zone_is_refused(settings):
    assert Warehouse(code="X1", name="x").timezone == settings.TIME_ZONE
    for bad in ("Mars/Olympus", "", "../etc/passwd"):
        with pytest.raises(ValidationError) as raised:
            Warehouse(code="X1", name="x", timezone=bad).full_clean()
        assert "timezone" in raised.value.message_dict
    Warehouse(code="X1", name="x", timezone="Asia/Shanghai").full_clean()


@pytest.mark.parametrize(
    "weekdays",
    [[0], [8], [1, 1], ["1"], [True], "1,2", {"1": 1}, [1.5]],
)
def test_weekdays_must_be_distinct_iso_numbers(warehouse, role, weekdays):
    with pytest.raises(ValidationError) as raised:
        make(warehouse, role, weekdays=weekdays).full_clean()
    assert "weekdays" in raised.value.message_dict


def test_valid_shifts_pass_and_weekdays_are_sorted(warehouse, role):
    night = make(warehouse, role, starts=dt.time(22), ends=dt.time(6), weekdays=[5, 1, 3])
    night.full_clean()
    assert night.weekdays == [1, 3, 5]
    assert night.times().crosses_midnight
    make(warehouse, role, weekdays=[]).full_clean()  # every day
    make(warehouse, role, starts=dt.time(6), ends=dt.time(6)).full_clean()  # 24 hours


def test_times_are_whole_minutes(warehouse, role):
    with pytest.raises(ValidationError):
        make(warehouse, role, starts=dt.time(6, 0, 30)).full_clean()
