"""A reminder of an alert nobody claimed reaches the open streams of those who see it, except
those who snoozed it, as `event: reminder` with N (SPEC 14)."""

from __future__ import annotations

import json

import pytest

from actions import followups
from config import timestamps
from notifications import lifecycle
from notifications.services import publish

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_reminder_is_sent_to_streams_of_who_see_it_and_did_not_snooze_it(
    open_stream, subscribed, warehouse, rep_notice
):
    rep_notice.remind_every_seconds = 60
    rep_notice.save()
    rita = subscribed("rita", warehouse, rep_notice)
    ralf = subscribed("ralf", warehouse, rep_notice)
    note = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    later = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish B-02-01")
    lifecycle.snooze(
        user=ralf,
        warehouse_id=warehouse.pk,
        notification_id=note.id,
        until=timestamps.now_ms() + 3_600_000,
    )
    rita_stream = open_stream(rita, warehouse)
    ralf_stream = open_stream(ralf, warehouse)

    assert followups.pass_all(at_ms=timestamps.now_ms() + 61_000)["reminded"] == 2
    # After the reminders, a change both see: ralf's stream must have had nothing before it.
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=later.id)

    reminders = [json.loads(rita_stream.until("reminder").data)["id"] for _ in range(2)]
    assert sorted(reminders) == sorted([note.id, later.id])
    seen = []
    while True:
        event = ralf_stream.next()
        assert event is not None
        seen.append((event.event, json.loads(event.data)["id"], event.id))
        if event.event == "notification":
            break
    assert seen == [("reminder", later.id, None), ("notification", later.id, seen[-1][2])]
    reminder = rita_stream.until("notification")
    assert json.loads(reminder.data)["status"] == "claimed"
