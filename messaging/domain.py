"""Chat domain objects (frozen dataclasses) and the errors chat operations raise."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class ChatKind(StrEnum):
    GROUP = "group"
    DIRECT = "direct"


@dataclass(frozen=True)
class UserRef:
    """A chat participant as clients see them."""

    id: int
    username: str


@dataclass(frozen=True)
class Message:
    id: int
    chat: str
    sender: UserRef
    body: str
    sent_at: datetime


@dataclass(frozen=True)
class Chat:
    """A chat as one member sees it: `unread` and `last_message` are theirs."""

    id: str
    kind: ChatKind
    members: tuple[UserRef, ...]
    unread: int
    last_message: Message | None
    last_activity: datetime


@dataclass(frozen=True)
class PendingMessages:
    """Messages of one chat that a member had not seen before a pending fetch."""

    chat: str
    messages: tuple[Message, ...]


class ChatNotFound(Exception):
    """No such chat, or the user is not a member: both look the same from outside (404)."""


class InvalidChatRequest(Exception):
    """A request the chat rules refuse (400); nothing has been written."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
