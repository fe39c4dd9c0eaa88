"""A reminder of an alert nobody claimed reaches the open streams of those who see it and are to
be told loudly (not snoozed, not muted below it: read_model/ to_tell), as `event: reminder`
with N (SPEC 14 and 17)."""

from __future__ import annotations

import json

import pytest

from actions import followups
from config import timestamps
from notifications import lifecycle
from notifications.domain import Severity
from notifications.readmodel import quiet as quiet_store
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
    # After the reminders, a publish both see: ralf's stream must have had one reminder before
    # it. (Not a claim of a reminded alert: the hub asks the rule when it hands an event on,
    # and a claim made meanwhile rightly stops that reminder.)
    after = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish C-03-02")

    reminders = [json.loads(rita_stream.until("reminder").data)["id"] for _ in range(2)]
    assert sorted(reminders) == sorted([note.id, later.id])
    seen = [(e.event, json.loads(e.data)["id"], e.id) for e in ralf_stream.through("notification")]
    assert seen == [("reminder", later.id, None), ("notification", after.id, seen[-1][2])]
    assert json.loads(rita_stream.until("notification").data)["id"] == after.id


def test_a_muted_users_stream_is_reminded_only_of_what_gets_through_the_mute(
    open_stream, subscribed, warehouse, rep_notice
):
    """The stream asks the read model's one rule (read_model/ to_tell, SPEC 17): a user who
    muted below critical hears no reminder of a warning, and still one of a critical alert."""
    rep_notice.remind_every_seconds = 60
    rep_notice.save()
    rita = subscribed("rita", warehouse, rep_notice)
    ralf = subscribed("ralf", warehouse, rep_notice)
    warning = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Low stock", severity="warning"
    )
    critical = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Blocked aisle", severity="critical"
    )
    quiet_store.mute_set(
        warehouse_id=warehouse.pk,
        user_id=ralf.pk,
        until_ms=timestamps.now_ms() + 3_600_000,
        below=Severity.CRITICAL.level,
    )
    rita_stream = open_stream(rita, warehouse)
    ralf_stream = open_stream(ralf, warehouse)

    assert followups.pass_all(at_ms=timestamps.now_ms() + 61_000)["reminded"] == 2
    # After the reminders, a publish both see: ralf's stream must have had only one before it.
    after = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish C-03-02")

    reminders = [json.loads(rita_stream.until("reminder").data)["id"] for _ in range(2)]
    assert sorted(reminders) == sorted([warning.id, critical.id])
    seen = [(e.event, json.loads(e.data)["id"]) for e in ralf_stream.through("notification")]
    assert seen == [("reminder", critical.id), ("notification", after.id)]
