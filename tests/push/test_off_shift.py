"""Web Push and shifts (SPEC 13): only members on shift are pushed, unless it is critical."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group

from notifications.services import publish
from shifts.models import Shift
from subscriptions.models import Subscription

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_schedule")]

NOON = dt.datetime(2026, 1, 14, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user, clock):
    """Replenishment works 22:00-06:00; ralf is also in Day (06:00-14:00), so on at noon."""
    clock.stop_at(int(NOON.timestamp() * 1000))
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    day = Group.objects.create(name="Day")
    Shift.objects.create(
        warehouse=warehouse, role=role, name="Night", starts=dt.time(22), ends=dt.time(6)
    )
    Shift.objects.create(
        warehouse=warehouse, role=day, name="Day", starts=dt.time(6), ends=dt.time(14)
    )
    return make_user("rita", role), make_user("ralf", role, day)


def test_off_shift_members_are_not_pushed_unless_it_is_critical(
    warehouse, rep_notice, on_their_phones, push_service, celery_eager
):
    publish(message_type=rep_notice, warehouse=warehouse, title="w", severity="warning")
    assert {r.path for r in push_service.received} == {"/push/ralf-phone"}

    publish(message_type=rep_notice, warehouse=warehouse, title="c", severity="critical")
    paths = [r.path for r in push_service.received]
    assert sorted(paths) == ["/push/ralf-phone", "/push/ralf-phone", "/push/rita-phone"]
