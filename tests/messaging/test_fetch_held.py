"""A pending fetch with nothing new is one round trip: the process holds the user's chat list
and how far each chat was seen at its last fetch, and reads the list back with every chat's
last message id in one pipeline. Only chats with a message past what was seen run their
script; a chat list that changed (a chat joined, left, re-created) is fetched in full. Nothing
pending is ever missed, and nothing is returned twice."""

from __future__ import annotations

import pytest

from messaging import services, store


def pending_ids(user) -> dict[str, list[int]]:
    return {p.chat: [m.id for m in p.messages] for p in services.messages_fetch_pending(user=user)}


def test_a_fetch_with_nothing_new_is_one_round_trip(alice, bob, group, round_trips):
    for _ in range(5):
        group(alice, bob)
    assert len(pending_ids(bob)) == 5

    round_trips["n"] = 0
    assert pending_ids(bob) == {}
    assert round_trips["n"] == 1


def test_a_new_message_is_fetched_once_in_two_round_trips(alice, bob, group, send, round_trips):
    chats = [group(alice, bob) for _ in range(4)]
    pending_ids(bob)
    [sent] = send(alice, chats[2], "news")

    round_trips["n"] = 0
    assert pending_ids(bob) == {chats[2].id: [sent]}
    assert round_trips["n"] == 2
    assert pending_ids(bob) == {}


def test_messages_seen_through_another_way_are_not_fetched_again(alice, bob, group, send):
    """Another process (here: the store called directly) fetched them: this process's record
    of what was seen is behind, which costs the chat's script and returns nothing."""
    chat = group(alice, bob)
    pending_ids(bob)
    send(alice, chat, "one", "two")
    [found] = store.fetch_pending(user_id=bob.pk, chat_ids=[chat.id], limit_per_chat=100)
    assert found is not None
    assert [m.body for m in found.messages] == ["one", "two"]

    assert pending_ids(bob) == {}
    [later] = send(alice, chat, "three")
    assert pending_ids(bob) == {chat.id: [later]}


def test_a_chat_joined_since_the_last_fetch_is_fetched(alice, bob, carol, group, send):
    group(alice, bob)
    pending_ids(bob)
    later = group(carol, bob, message="welcome")

    assert list(pending_ids(bob)) == [later.id]


def test_a_chat_left_and_joined_again_shows_what_came_after(alice, bob, carol, group, send):
    chat = group(alice, bob, carol)
    pending_ids(bob)
    services.chat_leave(user=bob, chat_id=chat.id)
    send(alice, chat, "while away")
    services.chat_add_member(user=alice, chat_id=chat.id, new_member_id=bob.pk)
    [after] = send(alice, chat, "welcome back")

    assert pending_ids(bob) == {chat.id: [after]}


def test_a_direct_chat_re_created_after_both_left_is_fetched(alice, bob):
    chat = services.chat_open_direct(user=alice, other_id=bob.pk)
    first = services.message_send(user=alice, chat_id=chat.id, body="first").id
    assert pending_ids(bob) == {chat.id: [first]}
    services.chat_leave(user=alice, chat_id=chat.id)
    services.chat_leave(user=bob, chat_id=chat.id)  # the chat is gone

    again = services.chat_open_direct(user=alice, other_id=bob.pk)
    assert again.id == chat.id
    second = services.message_send(user=alice, chat_id=chat.id, body="again").id
    assert pending_ids(bob) == {chat.id: [second]}


def test_a_capped_fetch_continues_at_the_next(alice, bob, group, send, settings):
    settings.CHAT_PENDING_MAX_PER_CHAT = 3
    chat = group(alice, bob)
    pending_ids(bob)
    sent = send(alice, chat, *[f"m{i}" for i in range(7)])

    assert pending_ids(bob) == {chat.id: sent[:3]}
    assert pending_ids(bob) == {chat.id: sent[3:6]}
    assert pending_ids(bob) == {chat.id: sent[6:]}
    assert pending_ids(bob) == {}


def test_what_the_process_holds_is_bounded(alice, bob, group, monkeypatch):
    from messaging import held_fetches

    monkeypatch.setattr(held_fetches, "USERS_HELD", 1)
    group(alice, bob)
    pending_ids(alice)
    pending_ids(bob)
    assert held_fetches.held_users() == 1


@pytest.mark.parametrize("stale", ["version", "chat"])
def test_a_forged_or_stale_record_costs_a_full_fetch_never_a_message(
    alice, bob, group, send, stale
):
    """Whatever the process holds, a chat list that differs from Redis's is fetched in full."""
    from messaging import held_fetches

    chat = group(alice, bob)
    pending_ids(bob)
    [sent] = send(alice, chat, "news")
    held = held_fetches.held(bob.pk)
    assert held is not None
    forged = {c: 10**9 for c in held.seen}  # "seen everything": would hide the news
    entries = held.entries
    if stale == "version":
        entries = tuple((c, v - 1) for c, v in entries)
    else:
        entries = (*entries, ("g-0000000000000000", 1.0))
    held_fetches.hold(bob.pk, entries, forged)

    assert pending_ids(bob) == {chat.id: [sent]}
