"""Chat domain objects (frozen dataclasses) and the errors chat operations raise."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from django.utils.translation import gettext as _

from config.errors import Conflict, Invalid, NotFound


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
    # True when a send with an Idempotency-Key found this message stored by an earlier
    # request with that key (and stored nothing now): the API says so in a header.
    replayed: bool = field(default=False, compare=False)


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


class ChatNotFound(NotFound):
    """No such chat, or the user is not a member: both look the same from outside (404)."""

    default_code = "chat_not_found"

    def __init__(self, chat_id: str = "") -> None:
        super().__init__(_("No such chat."))
        self.chat_id = chat_id


class InvalidChatRequest(Invalid):
    """A request the chat rules refuse (400); nothing has been written."""

    def __init__(self, field: str, message: str, *, code: str | None = None) -> None:
        super().__init__(message, field=field, code=code)


class PartnerInactive(Conflict):
    """A direct chat whose other member was deleted or deactivated takes no new messages (409)."""

    default_code = "partner_inactive"

    def __init__(self) -> None:
        super().__init__(
            _(
                "This direct chat's other member was deleted or deactivated: "
                "it takes no new messages."
            )
        )
