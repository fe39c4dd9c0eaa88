"""Chat semantics through the services: seen ids, cleanup, membership and the user indexes."""

from __future__ import annotations

import pytest

from config import timestamps
from messaging import keys, selectors, services, store
from messaging.domain import ChatNotFound, InvalidChatRequest

pytestmark = pytest.mark.django_db


def unread(user, chat) -> int:
    return selectors.chat_get(user=user, chat_id=chat.id).unread


def test_message_ids_count_up_from_one(alice, bob, group, send):
    chat = group(alice, bob)
    assert chat.last_message.id == 1
    assert send(bob, chat, "a", "b") == [2, 3]
    assert send(alice, chat, "c") == [4]


def test_messages_seen_by_every_member_are_deleted(alice, bob, carol, group, send, stored_ids):
    chat = group(alice, bob, carol)
    send(alice, chat, "2", "3")
    assert stored_ids(chat.id) == [1, 2, 3]
    services.chat_mark_read(user=bob, chat_id=chat.id, up_to=3)
    assert stored_ids(chat.id) == [1, 2, 3]  # carol has not seen them
    services.chat_mark_read(user=carol, chat_id=chat.id, up_to=2)
    assert stored_ids(chat.id) == [3]
    services.messages_fetch_pending(user=carol)
    assert stored_ids(chat.id) == []
    # The preview survives the cleanup of the message itself.
    preview = selectors.chat_get(user=bob, chat_id=chat.id).last_message
    assert preview is not None
    assert preview.body == "3"
    assert unread(bob, chat) == 0


def test_a_member_who_never_reads_keeps_the_messages(alice, bob, carol, group, send, stored_ids):
    chat = group(alice, bob, carol)
    send(bob, chat, *[str(i) for i in range(2, 12)])
    services.messages_fetch_pending(user=alice)
    services.messages_fetch_pending(user=bob)
    assert stored_ids(chat.id) == list(range(1, 12))
    assert unread(carol, chat) == 11
    assert [
        m.id for m in selectors.message_list(user=carol, chat_id=chat.id, after=0, limit=50)
    ] == list(range(1, 12))


def test_a_lagging_member_leaving_lets_the_cleanup_happen(
    alice, bob, carol, group, send, stored_ids
):
    chat = group(alice, bob, carol)
    send(alice, chat, "2")
    services.messages_fetch_pending(user=bob)
    assert stored_ids(chat.id) == [1, 2]
    services.chat_leave(user=carol, chat_id=chat.id)
    assert stored_ids(chat.id) == []


def test_sending_marks_your_own_message_seen_when_you_were_up_to_date(alice, bob, group, send):
    chat = group(alice, bob)
    services.chat_mark_read(user=bob, chat_id=chat.id, up_to=1)
    send(bob, chat, "mine")
    assert unread(bob, chat) == 0
    assert services.messages_fetch_pending(user=bob) == []


def test_sending_never_skips_messages_you_had_not_seen(alice, bob, group, send):
    # Bob has not fetched message 1 when he sends 2: a pending fetch must still deliver 1.
    chat = group(alice, bob)
    send(bob, chat, "reply")
    [pending] = services.messages_fetch_pending(user=bob)
    assert [m.id for m in pending.messages] == [1, 2]
    assert unread(bob, chat) == 0


def test_pending_fetch_is_capped_per_chat_and_continues(alice, bob, group, send, settings):
    settings.CHAT_PENDING_MAX_PER_CHAT = 4
    chat = group(alice, bob)
    send(alice, chat, *[str(i) for i in range(2, 11)])
    batches = []
    while pending := services.messages_fetch_pending(user=bob):
        batches.append([m.id for m in pending[0].messages])
    assert batches == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]


def test_pending_fetch_usernames(alice, bob, carol, group, send):
    chat = group(alice, bob, carol)
    send(carol, chat, "from carol")
    [pending] = services.messages_fetch_pending(user=bob)
    assert [(m.sender.username, m.body) for m in pending.messages] == [
        ("alice", "hello"),
        ("carol", "from carol"),
    ]


def test_sent_at_never_goes_backwards_within_a_chat(alice, bob, group, send, clock):
    chat = group(alice, bob)
    clock.stop_at(1_000_000_000)  # a clock far behind
    send(alice, chat, "late clock")
    messages = selectors.message_list(user=bob, chat_id=chat.id, after=0, limit=10)
    assert messages[1].sent_at >= messages[0].sent_at


def test_a_deleted_users_messages_still_show(alice, bob, group, send):
    chat = group(alice, bob)
    send(bob, chat, "soon gone")
    bob.delete()
    messages = selectors.message_list(user=alice, chat_id=chat.id, after=0, limit=10)
    assert messages[1].sender.username == selectors.DELETED_USERNAME


def test_malformed_chat_ids_are_not_found(alice):
    for call in (
        lambda: services.message_send(user=alice, chat_id="x}:y", body="hi"),
        lambda: services.chat_leave(user=alice, chat_id="../etc"),
        lambda: selectors.chat_get(user=alice, chat_id="d-2-1"),
    ):
        with pytest.raises(ChatNotFound):
            call()


def test_refusals_carry_the_field(alice, bob, group):
    chat = group(alice, bob)
    with pytest.raises(InvalidChatRequest) as refused:
        services.chat_mark_read(user=bob, chat_id=chat.id, up_to=5)
    assert refused.value.field == "up_to"
    assert "the last is 1" in refused.value.message


# --- The user-side indexes (other hash slots) ------------------------------------------------


def test_stale_entries_in_a_users_chat_list_are_skipped_and_dropped(alice, bob, group, redis):
    chat = group(alice, bob)
    # As if a write after the chat's script had been lost: an entry for a chat bob is not in.
    redis.zadd(keys.user_chats(bob.pk), {"g-00000000000000aa": 1, "d-1-999": 1})
    assert [c.id for c in selectors.chat_list(user=bob)] == [chat.id]
    assert [c.decode() for c in redis.zrange(keys.user_chats(bob.pk), 0, -1)] == [chat.id]


def test_a_late_removal_never_hides_a_chat_the_user_rejoined(alice, bob, carol, group, redis):
    chat = group(alice, bob, carol)
    left = store.leave(chat_id=chat.id, user_id=carol.pk, now_ms=timestamps.now_ms())
    assert left is not None
    # Carol is added back before the leave's index update lands.
    services.chat_add_member(user=alice, chat_id=chat.id, new_member_id=carol.pk)
    store.unindex_chat(chat_id=chat.id, user_ids=[carol.pk], version=left.version, activity_ms=None)
    assert [c.id for c in selectors.chat_list(user=carol)] == [chat.id]


def test_a_late_addition_leaves_only_a_stale_entry(alice, bob, carol, group, redis):
    chat = group(alice, bob)
    outcome = store.add_member(
        chat_id=chat.id,
        actor_id=alice.pk,
        user_id=carol.pk,
        now_ms=timestamps.now_ms(),
        max_members=50,
    )
    assert outcome is not None
    services.chat_leave(user=carol, chat_id=chat.id)
    # The join's index update arrives after the leave's removal: the entry is stale...
    store.index_chat(
        chat_id=chat.id, user_ids=[carol.pk], version=outcome.version, activity_ms=None
    )
    # ...and readers skip and drop it.
    assert selectors.chat_list(user=carol) == []
    assert redis.zcard(keys.user_chats(carol.pk)) == 0


def test_last_message_preview_hidden_from_members_who_joined_after_it(alice, bob, carol, group):
    chat = group(alice, bob)
    services.chat_add_member(user=alice, chat_id=chat.id, new_member_id=carol.pk)
    assert selectors.chat_get(user=carol, chat_id=chat.id).last_message is None
    preview = selectors.chat_get(user=bob, chat_id=chat.id).last_message
    assert preview is not None
    assert preview.id == 1


def test_a_run_of_sends_into_one_chat_is_one_round_trip_each(
    alice, bob, carol, group, send, redis, round_trips
):
    chat, other = group(alice, bob), group(alice, carol)
    send(alice, chat, "first")  # this process learns the chat's members
    round_trips["n"] = 0
    send(alice, chat, "second", "third")

    assert round_trips["n"] == 2
    assert [int(c) for c in redis.lrange(keys.contacts(alice.pk), 0, 1)] == [bob.pk, carol.pk]
    send(alice, other, "elsewhere")  # another chat: its members come to the front
    assert int(redis.lrange(keys.contacts(alice.pk), 0, 0)[0]) == carol.pk
    assert redis.zscore(keys.activity(), chat.id) is not None
