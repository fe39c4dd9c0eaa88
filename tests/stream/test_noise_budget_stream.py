"""The noise budget on the stream (SPEC 17): a live event's N says `quiet` for each stream's
user as their polls do, and a reminder does not ring for a user the alert came quietly to."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group

from actions import followups
from config import timestamps
from notifications import lifecycle
from notifications.services import publish
from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_stream_gets_its_users_quiet_and_a_quiet_alert_is_not_reminded_to_them(
    open_stream, subscribed, warehouse, rep_notice, client_for
):
    """ralf's extra role brings him five more alerts in the hour: the second replenishment is
    the seventh he could see, so it comes quietly to him; rita, who sees only the two, hears
    both. The reminders that follow ring for rita twice, for ralf once."""
    rep_notice.remind_every_seconds = 60
    rep_notice.save()
    rita = subscribed("rita", warehouse, rep_notice)
    ralf = subscribed("ralf", warehouse, rep_notice)
    night = Group.objects.create(name="night")
    ralf.groups.add(night)
    noisy = MessageType.objects.create(code="NOISY", name="Noisy", default_ttl_seconds=86_400)
    Subscription.objects.create(message_type=noisy, warehouse=warehouse, role=night)
    for i in range(5):
        publish(message_type=noisy, warehouse=warehouse, title=f"noisy {i}")
    rita_stream = open_stream(rita, warehouse)
    ralf_stream = open_stream(ralf, warehouse)

    first = publish(message_type=rep_notice, warehouse=warehouse, title="Replenish A-01-03")
    second = publish(message_type=rep_notice, warehouse=warehouse, title="Replenish B-02-01")

    def live(stream) -> dict[str, bool]:
        return {
            body["id"]: body["quiet"]
            for body in (json.loads(stream.until("notification").data) for _ in range(2))
        }

    assert live(rita_stream) == {first.id: False, second.id: False}
    assert live(ralf_stream) == {first.id: False, second.id: True}
    # The stream says what the poll says.
    polled = client_for(ralf).get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()
    assert {n["id"]: n["quiet"] for n in polled["results"]}[second.id] is True

    assert followups.pass_all(at_ms=timestamps.now_ms() + 61_000)["reminded"] == 2
    # After the reminders, a change both see: what ralf's stream has before it is all he got.
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=first.id)

    reminders = [json.loads(rita_stream.until("reminder").data) for _ in range(2)]
    assert sorted(r["id"] for r in reminders) == sorted([first.id, second.id])
    assert {r["id"]: r["quiet"] for r in reminders} == {first.id: False, second.id: False}
    seen = []
    while True:
        event = ralf_stream.next()
        assert event is not None
        body = json.loads(event.data)
        seen.append((event.event, body["id"]))
        if event.event == "notification":
            break
    assert seen == [("reminder", first.id), ("notification", first.id)]
