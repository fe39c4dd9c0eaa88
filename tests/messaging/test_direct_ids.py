"""A direct chat's id is fixed by its pair, so its message ids must never go back (issue 9.5)."""

from __future__ import annotations

import pytest
from django.conf import settings

from messaging import keys, selectors, services

pytestmark = pytest.mark.django_db


def chat_url(chat_id: str, tail: str = "") -> str:
    return f"/api/v1/chats/{chat_id}/" + (f"{tail}/" if tail else "")


def test_a_re_created_direct_chat_continues_its_message_ids(alice, bob, client_for):
    a, b = client_for(alice), client_for(bob)
    chat_id = a.post("/api/v1/chats/direct/", {"user": bob.pk}, format="json").json()["id"]
    sent = [
        a.post(chat_url(chat_id, "messages"), {"body": f"m{i}"}, format="json").json()["id"]
        for i in range(3)
    ]
    assert sent == [1, 2, 3]
    assert a.post(chat_url(chat_id, "leave")).status_code == 204
    assert b.post(chat_url(chat_id, "leave")).status_code == 204
    assert a.get(chat_url(chat_id)).status_code == 404  # the chat is gone

    assert a.post("/api/v1/chats/direct/", {"user": bob.pk}, format="json").json()["id"] == chat_id
    new = a.post(chat_url(chat_id, "messages"), {"body": "again"}, format="json").json()
    assert new["id"] == 4
    # A client that remembered `after=3` from the chat's first life gets the new message.
    page = b.get(chat_url(chat_id, "messages"), {"after": 3}).json()["results"]
    assert [(m["id"], m["body"]) for m in page] == [(4, "again")]
    assert [m.id for p in services.messages_fetch_pending(user=bob) for m in p.messages] == [4]


def test_a_direct_chat_dropped_as_idle_continues_its_ids_too(alice, bob, clock):
    clock.days_ago(settings.CHAT_IDLE_DAYS + 1)
    chat = services.chat_open_direct(user=alice, other_id=bob.pk)
    services.message_send(user=alice, chat_id=chat.id, body="old")
    services.message_send(user=bob, chat_id=chat.id, body="older reply")
    clock.days_ago(0)
    assert services.chats_drop_idle() == 1
    assert selectors.chat_list(user=alice) == []

    services.chat_open_direct(user=bob, other_id=alice.pk)
    assert services.message_send(user=bob, chat_id=chat.id, body="new").id == 3


def test_only_the_sequence_of_a_gone_direct_chat_stays(alice, bob, redis, chat_keys_in_redis):
    chat = services.chat_open_direct(user=alice, other_id=bob.pk)
    services.message_send(user=alice, chat_id=chat.id, body="hi")
    services.chat_leave(user=alice, chat_id=chat.id)
    services.chat_leave(user=bob, chat_id=chat.id)
    assert chat_keys_in_redis(chat.id) == {keys.sequence(chat.id)}
    assert redis.get(keys.sequence(chat.id)) == b"1"
