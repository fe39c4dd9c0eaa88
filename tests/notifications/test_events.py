"""Publishing announces each delivery on the warehouse's events channel (SPEC section 8)."""

from __future__ import annotations

import pytest

from notifications import keys
from notifications.services import publish
from subscriptions.models import Subscription
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def test_event_channel_names_are_pinned():
    assert keys.events_channel_pattern() == "wms:{wh:*}:events"
    assert keys.warehouse_of_channel("wms:{wh:4}:events") == 4
    assert keys.warehouse_of_channel("wms:{wh:x}:events") is None
    assert keys.warehouse_of_channel("wms:{chat:g-1}:events") is None


@pytest.fixture
def heard(redis):
    """Messages published on any warehouse's events channel during the test."""
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    pubsub.psubscribe(keys.events_channel_pattern())
    messages: list[tuple[str, str]] = []

    def collect() -> list[tuple[str, str]]:
        while (message := pubsub.get_message(timeout=0.2)) is not None:
            messages.append((message["channel"].decode(), message["data"].decode()))
        return messages

    yield collect
    pubsub.close()


def test_the_publish_script_announces_cursor_id_and_inboxes(
    heard, warehouse, rep_notice, role, alice
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    result = publish(message_type=rep_notice, warehouse=warehouse, title="Replenish A-01-03")

    assert eventually(lambda: heard())
    channel, payload = heard()[0]
    assert channel == f"wms:{{wh:{warehouse.pk}}}:events"
    cursor, notification_id, *inboxes = payload.split(" ")
    assert (int(cursor), notification_id) == (result.cursor, result.id)
    assert sorted(inboxes) == sorted([f"r:{role.pk}", f"u:{alice.pk}"])


def test_no_event_without_a_delivery(heard, warehouse, rep_notice):
    publish(message_type=rep_notice, warehouse=warehouse, title="Nobody subscribed")
    publish(message_type=rep_notice, warehouse=warehouse, title="Still nobody")
    assert heard() == []
