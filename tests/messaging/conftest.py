"""Helpers for chat tests: more users, chats made through the services, raw Redis views."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from messaging import keys, services
from messaging.domain import Chat


@pytest.fixture
def carol(make_user) -> User:
    return make_user("carol")


@pytest.fixture
def dave(make_user) -> User:
    return make_user("dave")


@pytest.fixture
def group(alice, bob, carol):
    """Make a group chat through the service: group(creator, *members, message=...)."""

    def make(creator: User | None = None, *members: User, message: str = "hello") -> Chat:
        creator = creator or alice
        members = members or ((bob, carol) if creator == alice else (alice,))
        return services.chat_create_group(
            creator=creator, member_ids=[m.pk for m in members], message=message
        )

    return make


@pytest.fixture
def send():
    def send_as(user: User, chat: Chat | str, *bodies: str) -> list[int]:
        chat_id = chat if isinstance(chat, str) else chat.id
        return [services.message_send(user=user, chat_id=chat_id, body=b).id for b in bodies]

    return send_as


@pytest.fixture
def chat_keys_in_redis(redis):
    """Every key carrying the chat's hash tag, found with SCAN (not KEYS)."""

    def scan(chat_id: str) -> set[str]:
        pattern = keys.chat_prefix(chat_id).replace("{", "\\{").replace("}", "\\}") + "*"
        return {k.decode() for k in redis.scan_iter(match=pattern, count=500)}

    return scan


@pytest.fixture
def stored_ids(redis):
    """Ids of the messages a chat still holds in Redis."""

    def read(chat_id: str) -> list[int]:
        return [
            int(score) for _m, score in redis.zrange(keys.messages(chat_id), 0, -1, withscores=True)
        ]

    return read
