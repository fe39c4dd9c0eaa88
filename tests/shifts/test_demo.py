"""The demo's shifts: Day and Night per warehouse, handing over a few minutes after it starts."""

from __future__ import annotations

import datetime as dt

import pytest

from config import timestamps
from demo.data import load_demo_data
from shifts import handovers, schedule
from shifts.models import Handover, Shift
from subscriptions.models import Warehouse

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_schedule")]


def test_the_demo_hands_over_within_a_few_minutes(settings, clock):
    settings.WMS_DEMO_SHIFT_CHANGE_MINUTES = 3
    start = int(dt.datetime(2026, 1, 14, 9, 30, 20, tzinfo=dt.UTC).timestamp() * 1000)
    clock.stop_at(start)
    load_demo_data()
    load_demo_data()  # idempotent: still two shifts per warehouse

    assert Shift.objects.count() == 4
    now = timestamps.now()
    for shift in Shift.objects.filter(name="Day"):
        running = schedule.current(shift.times(), now)
        assert running is not None
        assert dt.timedelta(minutes=3) <= running.end - now <= dt.timedelta(minutes=4)

    clock.stop_at(start + 5 * 60_000)
    assert handovers.hand_over_due() == 2  # one per warehouse
    assert set(Handover.objects.values_list("shift_name", flat=True)) == {"Day"}


def test_the_demo_warehouses_sit_in_two_time_zones(settings, clock):
    settings.WMS_DEMO_SHIFT_CHANGE_MINUTES = 3
    clock.stop_at(int(dt.datetime(2026, 1, 14, 9, 30, 20, tzinfo=dt.UTC).timestamp() * 1000))
    load_demo_data()

    zones = dict(Warehouse.objects.values_list("code", "timezone"))
    assert zones == {"SH01": "Asia/Shanghai", "HH02": "Europe/Berlin"}
    # The same instant of change is another time on each warehouse's clock (local times).
    changes = {s.warehouse.code: s.ends for s in Shift.objects.filter(name="Day")}
    assert changes == {"SH01": dt.time(17, 34), "HH02": dt.time(10, 34)}


def test_an_earlier_demo_database_gets_the_zones_too(settings, clock):
    """Demo data of earlier versions had SH01 and BJ02 (Beijing) both on UTC: SH01 gets its
    zone, and BJ02 becomes the second warehouse (its id, bins and subscriptions kept)."""
    settings.WMS_DEMO_SHIFT_CHANGE_MINUTES = 3
    old = Warehouse.objects.create(code="BJ02", name="Beijing Shunyi DC", timezone="UTC")
    Warehouse.objects.create(code="SH01", name="Shanghai Pudong DC", timezone="UTC")
    load_demo_data()

    zones = dict(Warehouse.objects.values_list("code", "timezone"))
    assert zones == {"SH01": "Asia/Shanghai", "HH02": "Europe/Berlin"}
    assert Warehouse.objects.get(code="HH02").pk == old.pk
