"""A chat whose index write failed after its script ran is still found (issue 9.4).

The chat's own keys and the indexes (each member's chat list, the activity index) live in
different hash slots, so they are written by separate calls. Here Redis starts refusing
writes between those calls (out of memory: a real Redis error, like a connection dropped at
that moment); the client got an error, but the chat exists and its members must see it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from redis.exceptions import ResponseError

from messaging import keys, selectors, services, store

pytestmark = pytest.mark.django_db


@pytest.fixture
def fail_writes_after(redis, monkeypatch) -> Iterator[Callable[[str], None]]:
    """fail_writes_after("create_group"): once that store call has run, Redis refuses writes."""

    def arm(name: str) -> None:
        real = getattr(store, name)

        def then_refuse(**kwargs: Any) -> Any:
            result = real(**kwargs)
            redis.config_set("maxmemory", 1)  # noeviction: every write is an OOM error now
            return result

        monkeypatch.setattr(store, name, then_refuse)

    yield arm
    redis.config_set("maxmemory", 0)


def test_a_group_chat_is_found_when_its_index_write_failed(
    alice, bob, carol, redis, fail_writes_after
):
    fail_writes_after("create_group")
    with pytest.raises(ResponseError):
        services.chat_create_group(creator=alice, member_ids=[bob.pk, carol.pk], message="hi")
    redis.config_set("maxmemory", 0)

    [chat] = selectors.chat_list(user=bob)
    assert [m.username for m in chat.members] == ["alice", "bob", "carol"]
    assert chat.unread == 1
    assert [c.id for c in selectors.chat_list(user=carol)] == [chat.id]
    assert [c.id for c in selectors.chat_list(user=alice)] == [chat.id]
    [pending] = services.messages_fetch_pending(user=carol)
    assert [m.body for m in pending.messages] == ["hi"]
    # The retention sweeps find it too.
    assert redis.zscore(keys.activity(), chat.id) is not None


def test_a_direct_chat_is_found_when_its_index_write_failed(alice, bob, redis, fail_writes_after):
    fail_writes_after("open_direct")
    with pytest.raises(ResponseError):
        services.chat_open_direct(user=alice, other_id=bob.pk)
    redis.config_set("maxmemory", 0)

    chat_id = keys.direct_chat_id(alice.pk, bob.pk)
    assert [c.id for c in selectors.chat_list(user=bob)] == [chat_id]
    assert [c.id for c in selectors.chat_list(user=alice)] == [chat_id]
    assert redis.zscore(keys.activity(), chat_id) is not None


def test_an_added_member_finds_the_chat_when_the_index_write_failed(
    alice, bob, carol, group, redis, fail_writes_after
):
    chat = group(alice, bob)
    fail_writes_after("add_member")
    with pytest.raises(ResponseError):
        services.chat_add_member(user=alice, chat_id=chat.id, new_member_id=carol.pk)
    redis.config_set("maxmemory", 0)

    assert [c.id for c in selectors.chat_list(user=carol)] == [chat.id]


def test_a_refused_addition_leaves_no_entry_in_the_users_list(alice, bob, carol, group, redis):
    chat = group(alice, bob)
    with pytest.raises(services.ChatNotFound):
        services.chat_add_member(user=carol, chat_id=chat.id, new_member_id=carol.pk)
    assert redis.zscore(keys.user_chats(carol.pk), chat.id) is None
