"""What the scripts PUBLISH (the conventions in notifications/keys.py and messaging/keys.py),
parsed into events; and how events are shown to one user, exactly as the REST API shows them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from config.json_renderer import JSONRenderer
from config.redis import as_text
from config.timestamps import ms_to_datetime
from messaging import keys as chat_keys
from messaging.api.serializers import MessageSerializer
from messaging.domain import Message, UserRef
from notifications import hooks
from notifications import keys as notification_keys
from notifications.api.serializers import notification_dict
from notifications.domain import InboxItem


@dataclass(frozen=True)
class NotificationEvent:
    """A notification got a cursor (published, or its status changed) in these inboxes."""

    warehouse_id: int
    cursor: int
    notification_id: str
    inboxes: frozenset[str]  # "u:<user id>" / "r:<group id>"


@dataclass(frozen=True)
class ReminderEvent:
    """An open alert nobody claimed was reminded (SPEC 14): tell the users who see one of these
    inboxes, except those who snoozed it. `cursor` is its current one (not a new change)."""

    warehouse_id: int
    cursor: int
    notification_id: str
    inboxes: frozenset[str]
    snoozers: frozenset[int]
    # The SSE event name: "reminder", or "claim_expired" (SPEC 17: the holder's claim was let
    # go; `inboxes` is then the holder's own, so only their streams are told).
    frame: str = "reminder"


@dataclass(frozen=True)
class ChatEvent:
    """A message was stored in a chat with these members."""

    chat_id: str
    member_ids: frozenset[int]
    message_id: int
    sender_id: int
    body: str
    sent_ms: int


REMINDER = "reminder "
CLAIM_EXPIRED = "claim_expired "


def parse(
    channel: str | bytes, payload: str | bytes
) -> NotificationEvent | ReminderEvent | ChatEvent | None:
    """The event a pub/sub message announces; None for a channel or payload of another form."""
    channel = as_text(channel)
    payload = as_text(payload)
    warehouse_id = notification_keys.warehouse_of_channel(channel)
    if warehouse_id is not None and payload.startswith(REMINDER):
        # lua/remind.lua: "reminder <cursor> <id> <inbox> ...|<snoozer id> ..."
        route, _, snoozers = payload[len(REMINDER) :].partition("|")
        cursor, notification_id, *inboxes = route.split(" ")
        return ReminderEvent(
            warehouse_id=warehouse_id,
            cursor=int(cursor),
            notification_id=notification_id,
            inboxes=frozenset(i for i in inboxes if i),
            snoozers=frozenset(int(u) for u in snoozers.split() if u),
        )
    if warehouse_id is not None and payload.startswith(CLAIM_EXPIRED):
        # read_model/ expire_claim: "claim_expired <cursor> <id> u:<holder id>"
        cursor, notification_id, holder = payload[len(CLAIM_EXPIRED) :].split(" ")
        return ReminderEvent(
            warehouse_id=warehouse_id,
            cursor=int(cursor),
            notification_id=notification_id,
            inboxes=frozenset({holder}),
            snoozers=frozenset(),
            frame="claim_expired",
        )
    if warehouse_id is not None:
        cursor, notification_id, *inboxes = payload.split(" ")
        return NotificationEvent(
            warehouse_id=warehouse_id,
            cursor=int(cursor),
            notification_id=notification_id,
            inboxes=frozenset(i for i in inboxes if i),
        )
    chat_id = chat_keys.chat_of_channel(channel)
    if chat_id is not None:
        members, _, raw = payload.partition("\n")
        message = json.loads(raw)
        return ChatEvent(
            chat_id=chat_id,
            member_ids=frozenset(int(m) for m in members.split(" ") if m),
            message_id=int(message["id"]),
            sender_id=int(message["sender"]),
            body=message["body"],
            sent_ms=int(message["ts"]),
        )
    return None


_renderer = JSONRenderer()


def item_data(item: InboxItem, actions: list[dict[str, Any]] | None = None) -> bytes:
    """N as GET /api/v1/notifications/ serializes it (same serializer, same renderer). Its
    `actions` are what the process holds (hooks.actions.now: the stream's loop never waits on
    the database or Redis for them; the replay's thread and the hub load them first)."""
    if actions is None:
        actions = hooks.actions.now(item.notification.message_type) or []
    rendered: bytes = _renderer.render(notification_dict(item, actions))
    return rendered


def chat_data(event: ChatEvent, sender: UserRef) -> bytes:
    """{"chat": id, "message": M}, M as the chat endpoints serialize it."""
    message = Message(
        id=event.message_id,
        chat=event.chat_id,
        sender=sender,
        body=event.body,
        sent_at=ms_to_datetime(event.sent_ms),
    )
    rendered: bytes = _renderer.render(
        {"chat": event.chat_id, "message": MessageSerializer(message).data}
    )
    return rendered
