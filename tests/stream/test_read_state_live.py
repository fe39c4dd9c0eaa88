"""A live event's `read` follows the one rule of the read model (per-class watermarks, one-by-one
marks, snoozes), and a failure to present one event ends only the streams of that event."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from config import timestamps
from config.redis import get_redis
from notifications import keys, lifecycle
from notifications.services import mark_read, publish

pytestmark = pytest.mark.django_db(transaction=True)


def notify(warehouse, title: str = "Replenish A-01-03", **kwargs):
    return publish(message_type="REP_NOTICE", warehouse=warehouse, title=title, **kwargs)


def test_after_mark_all_read_every_stream_gets_the_next_notification_unread(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    ralf = User.objects.create_user("ralf")
    ralf.groups.add(rita.groups.get())
    before = notify(warehouse, "before")
    mark_read(user=rita, warehouse_id=warehouse.pk, ids=None)
    rita_stream = open_stream(rita, warehouse)
    ralf_stream = open_stream(ralf, warehouse)

    after = notify(warehouse, "after")

    for stream in (rita_stream, ralf_stream):
        event = stream.until("notification")
        body = json.loads(event.data)
        assert (event.id, body["id"], body["read"]) == (str(after.cursor), after.id, False)
    # A change of the one covered by rita's "mark all read" is read for her, not for ralf.
    claimed = lifecycle.claim(user=ralf, warehouse_id=warehouse.pk, notification_id=before.id)
    rita_event = json.loads(rita_stream.until("notification").data)
    ralf_event = json.loads(ralf_stream.until("notification").data)
    assert (rita_event["cursor"], rita_event["read"]) == (claimed.cursor, True)
    assert (ralf_event["cursor"], ralf_event["read"]) == (claimed.cursor, True)  # he claimed it
    assert rita_event["status"] == ralf_event["status"] == "claimed"


def test_a_snoozed_alert_changed_by_someone_else_is_read_for_its_snoozer(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    ralf = User.objects.create_user("ralf")
    ralf.groups.add(rita.groups.get())
    note = notify(warehouse, severity="warning")
    until = timestamps.now_ms() + 3_600_000
    lifecycle.snooze(user=rita, warehouse_id=warehouse.pk, notification_id=note.id, until=until)
    rita_stream = open_stream(rita, warehouse)
    ralf_stream = open_stream(ralf, warehouse)

    claimed = lifecycle.claim(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)

    rita_event = json.loads(rita_stream.until("notification").data)
    assert (rita_event["cursor"], rita_event["read"]) == (claimed.cursor, True)
    # The poll says the same.
    polled = [
        item
        for item in lifecycle_listing(rita, warehouse)
        if item["id"] == note.id  # include_read: the snoozed one is listed, read
    ]
    assert [item["read"] for item in polled] == [True]
    assert json.loads(ralf_stream.until("notification").data)["read"] is True


def lifecycle_listing(user, warehouse) -> list[dict]:
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)
    answer = client.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk, "include_read": "true"}
    )
    assert answer.status_code == 200
    return answer.json()["results"]


def test_an_event_that_cannot_be_presented_ends_only_its_own_streams(
    open_stream, subscribed, warehouse, other_warehouse, rep_notice
):
    """A script error while presenting one event (here: her warehouse's per-notification read
    state is not a hash) closes the streams that event was for; other streams and the
    subscription go on."""
    rita = subscribed("rita", warehouse, rep_notice)
    otto = subscribed("otto", other_warehouse, rep_notice)
    rita_stream = open_stream(rita, warehouse)
    otto_stream = open_stream(otto, other_warehouse)
    get_redis().set(keys.reads(warehouse.pk), "not a hash")

    notify(warehouse, "cannot be shown to rita")

    assert rita_stream.next() is None  # ended: her client reconnects and replays
    later = notify(other_warehouse, "elsewhere")
    assert otto_stream.until("notification").id == str(later.cursor)
