"""Escalation and shifts (SPEC 13): an escalation due while the escalation role has nobody on
shift waits for that role's next shift; critical alerts do not wait."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group

from notifications import hooks, keys, lifecycle
from notifications.selectors import inbox_page
from shifts.models import Shift
from subscriptions.models import Subscription

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_schedule")]

NOON = dt.datetime(2026, 1, 14, 12, 0, tzinfo=dt.UTC)  # the test warehouse runs on UTC
NIGHT_STARTS_MS = int(dt.datetime(2026, 1, 14, 22, 0, tzinfo=dt.UTC).timestamp() * 1000)


def ms(value: dt.datetime) -> int:
    return int(value.timestamp() * 1000)


@pytest.fixture
def night_supervisors(warehouse, rep_notice, role, make_user, clock):
    """REP_NOTICE escalates after 120 s to Supervisors, who work 22:00-06:00 only."""
    clock.stop_at(ms(NOON))
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    make_user("rita", role)
    group = Group.objects.create(name="Supervisors")
    rep_notice.escalate_after_seconds = 120
    rep_notice.escalation_role = group
    rep_notice.save()
    Shift.objects.create(
        warehouse=warehouse, role=group, name="Night", starts=dt.time(22), ends=dt.time(6)
    )
    return make_user("sam", group)


def test_an_escalation_waits_for_the_roles_next_shift(warehouse, night_supervisors, send, redis):
    sam = night_supervisors
    note = send(severity="warning", ttl_seconds=86400)
    due = ms(NOON) + 120_000

    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=due + 1000) == 0
    assert inbox_page(user=sam, warehouse_id=warehouse.pk).items == []
    # Still waiting in the index, now due when the night shift starts.
    assert redis.zscore(keys.escalations(warehouse.pk), str(note.cursor)) == NIGHT_STARTS_MS
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=NIGHT_STARTS_MS - 1) == 0

    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=NIGHT_STARTS_MS) == 1
    (item,) = inbox_page(user=sam, warehouse_id=warehouse.pk).items
    assert item.notification.id == note.id
    assert item.lifecycle.severity == "critical"
    assert item.lifecycle.escalated_at_ms == NIGHT_STARTS_MS


def test_a_critical_alert_escalates_at_once_off_shift(warehouse, night_supervisors, send):
    sam = night_supervisors
    note = send(severity="critical")
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=ms(NOON) + 121_000) == 1
    assert [i.notification.id for i in inbox_page(user=sam, warehouse_id=warehouse.pk).items] == [
        note.id
    ]


def test_on_shift_it_escalates_when_due(warehouse, night_supervisors, send, clock):
    night = dt.datetime(2026, 1, 14, 23, 0, tzinfo=dt.UTC)
    clock.stop_at(ms(night))
    send(severity="info")
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=ms(night) + 121_000) == 1


def test_waiting_ones_do_not_hold_up_the_batches(
    warehouse, night_supervisors, send, settings, redis
):
    settings.NOTIFICATION_ESCALATION_BATCH = 3
    waiting = [send(title=f"w{i}", severity="info", ttl_seconds=86400) for i in range(7)]
    send(title="urgent", severity="critical")
    at = ms(NOON) + 121_000

    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=at) == 1  # the critical one
    # Every waiting one moved to the shift start: nothing left due now, so the loop ended.
    index = keys.escalations(warehouse.pk)
    assert redis.zcount(index, "-inf", at) == 0
    assert {m.decode() for m in redis.zrangebyscore(index, NIGHT_STARTS_MS, NIGHT_STARTS_MS)} == {
        str(n.cursor) for n in waiting
    }
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=NIGHT_STARTS_MS) == 7


def test_without_a_shifts_feature_every_role_is_on_shift(
    warehouse, night_supervisors, send, monkeypatch
):
    monkeypatch.setattr(hooks, "shifts", hooks.NoShifts())  # as when shifts is not installed
    sam = night_supervisors
    note = send(severity="warning", ttl_seconds=86400)
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=ms(NOON) + 121_000) == 1  # no wait
    assert [i.notification.id for i in inbox_page(user=sam, warehouse_id=warehouse.pk).items] == [
        note.id
    ]
    with pytest.raises(lifecycle.NoShift):
        lifecycle.snooze(
            user=sam, warehouse_id=warehouse.pk, notification_id=note.id, until=lifecycle.NEXT_SHIFT
        )
