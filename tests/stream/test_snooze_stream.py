"""A woken snooze reaches open streams and is replayed on reconnect (SPEC 13, SPEC 8)."""

from __future__ import annotations

import json

import pytest

from config import timestamps
from notifications import lifecycle
from notifications.services import publish

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_woken_snooze_is_pushed_and_replayed(open_stream, subscribed, warehouse, rep_notice):
    rita = subscribed("rita", warehouse, rep_notice)
    note = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    until = timestamps.now_ms() + 3_600_000
    lifecycle.snooze(user=rita, warehouse_id=warehouse.pk, notification_id=note.id, until=until)

    # A replay from before it shows it snoozed (streams send read ones too).
    first = open_stream(rita, warehouse, last_event_id=note.cursor - 1)
    (replayed,) = [json.loads(e.data) for e in first.replayed]
    assert (replayed["id"], replayed["read"]) == (note.id, True)
    assert replayed["snoozed_until"] is not None
    ready = first.last_id

    woken = lifecycle.wake(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)

    pushed = first.until("notification")
    assert pushed.id == str(woken.cursor)
    body = json.loads(pushed.data)
    assert (body["id"], body["read"], body["snoozed_until"]) == (note.id, False, None)
    again = open_stream(rita, warehouse, last_event_id=ready)
    assert [(json.loads(e.data)["id"], e.id) for e in again.replayed] == [
        (note.id, str(woken.cursor))
    ]
