"""Sending announces the message on the chat's events channel (SPEC section 8)."""

from __future__ import annotations

import json
from typing import Any

from messaging import keys, services
from tests.waiting import eventually


def test_chat_event_channel_names_are_pinned():
    assert keys.events_channel("g-0123456789abcdef") == "wms:{chat:g-0123456789abcdef}:events"
    assert keys.events_channel_pattern() == "wms:{chat:*}:events"
    assert keys.chat_of_channel("wms:{chat:d-1-2}:events") == "d-1-2"
    assert keys.chat_of_channel("wms:{chat:d-2-1}:events") is None
    assert keys.chat_of_channel("wms:{wh:1}:events") is None


def test_the_send_script_announces_members_and_message(redis, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    chat = services.chat_open_direct(user=alice, other_id=bob.pk)
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.events_channel(chat.id))
    sent = services.message_send(user=alice, chat_id=chat.id, body="Bin A-01-03 is empty")

    heard: list[dict[str, Any] | None] = []

    def listen() -> bool:
        heard.append(pubsub.get_message(timeout=0.1))
        return any(heard)

    assert eventually(listen)
    message = next(m for m in heard if m)
    members, _, raw = message["data"].decode().partition("\n")
    assert sorted(int(m) for m in members.split()) == sorted([alice.pk, bob.pk])
    stored = json.loads(raw)
    assert (stored["id"], stored["sender"], stored["body"]) == (sent.id, alice.pk, sent.body)
    pubsub.close()
