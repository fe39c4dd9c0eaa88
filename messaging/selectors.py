"""Reading chats: a user's chats, one chat, a page of messages, contact autocomplete."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.functions import Lower

from config.timestamps import ms_to_datetime
from config.users import User

from . import keys, store
from .domain import Chat, ChatNotFound, Message, UserRef
from .store import StoredChat, StoredMessage

# Shown for a member whose account has been deleted from the database since they chatted.
DELETED_USERNAME = "(deleted user)"


def user_refs(user_ids: Iterable[int]) -> dict[int, UserRef]:
    """Usernames for these ids in one query (none for no ids: a fetch with nothing new)."""
    wanted = set(user_ids)
    if not wanted:
        return {}
    found = {
        pk: UserRef(id=pk, username=username)
        for pk, username in get_user_model()
        .objects.filter(pk__in=wanted)
        .values_list("pk", "username")
    }
    return {pk: found.get(pk, UserRef(id=pk, username=DELETED_USERNAME)) for pk in wanted}


def present_message(message: StoredMessage, users: dict[int, UserRef]) -> Message:
    return Message(
        id=message.id,
        chat=message.chat_id,
        sender=users[message.sender_id],
        body=message.body,
        sent_at=ms_to_datetime(message.sent_ms),
    )


def present_messages(messages: Sequence[StoredMessage]) -> list[Message]:
    """Messages with their senders' usernames (one query for all of them)."""
    users = user_refs(m.sender_id for m in messages)
    return [present_message(m, users) for m in messages]


def present_chats(chats: Sequence[StoredChat]) -> list[Chat]:
    """Chats with their members' and last senders' usernames (one query for all of them)."""
    ids: set[int] = set()
    for chat in chats:
        ids.update(chat.member_ids)
        if chat.last_message:
            ids.add(chat.last_message.sender_id)
    users = user_refs(ids)
    return [
        Chat(
            id=chat.id,
            kind=chat.kind,
            members=tuple(
                sorted(
                    (users[m] for m in chat.member_ids), key=lambda u: (u.username.casefold(), u.id)
                )
            ),
            unread=chat.unread,
            last_message=(present_message(chat.last_message, users) if chat.last_message else None),
            last_activity=ms_to_datetime(chat.last_activity_ms),
        )
        for chat in chats
    ]


def require_chat_id(chat_id: str) -> str:
    """The id if it has a form this app hands out; otherwise there is no such chat."""
    if not keys.is_chat_id(chat_id):
        raise ChatNotFound(chat_id)
    return chat_id


def stored_chat(*, user_id: int, chat_id: str) -> StoredChat:
    """One chat as a member sees it, straight from the store (ChatNotFound if not a member)."""
    [found] = store.summaries(user_id=user_id, chat_ids=[require_chat_id(chat_id)])
    if found is None:
        raise ChatNotFound(chat_id)
    return found


def chat_get(*, user: User, chat_id: str) -> Chat:
    """One chat as the user sees it; ChatNotFound unless they are a member."""
    return present_chats([stored_chat(user_id=user.pk, chat_id=chat_id)])[0]


def chat_list(*, user: User) -> list[Chat]:
    """The user's chats, most recent activity first: three Redis round trips however many
    chats (the chat list; redis-py's check that the summary script is loaded; every chat's
    summary in one pipeline), a fourth only to drop stale entries, and one database query."""
    user_id = user.pk
    entries = store.chat_ids_of(user_id)
    found = store.summaries(user_id=user_id, chat_ids=[chat for chat, _ in entries])
    # The user's chat list is an index; entries whose chat no longer counts them as a member
    # are dropped here (conditionally: never one re-added meanwhile).
    store.drop_stale(
        user_id=user_id, entries=[e for e, chat in zip(entries, found, strict=True) if chat is None]
    )
    chats = [chat for chat in found if chat is not None]
    chats.sort(key=lambda c: (c.last_activity_ms, c.id), reverse=True)
    return present_chats(chats)


def message_list(*, user: User, chat_id: str, after: int, limit: int) -> list[Message]:
    """Stored messages after `after`, oldest first; seen ids do not change."""
    found = store.list_messages(
        chat_id=require_chat_id(chat_id), user_id=user.pk, after=after, limit=limit
    )
    if found is None:
        raise ChatNotFound(chat_id)
    return present_messages(found)


def contact_search(*, user: User, q: str, limit: int | None = None) -> list[UserRef]:
    """Autocomplete: my recent contacts matching the prefix (most recent first), then other
    active users matching it (by username), excluding me; at most `limit`."""
    limit = settings.CHAT_CONTACTS_LIMIT if limit is None else limit
    user_id = user.pk
    candidates = get_user_model().objects.filter(is_active=True).exclude(pk=user_id)
    if q:
        candidates = candidates.filter(username__istartswith=q)
    recent_ids = store.recent_contacts(user_id)
    recent = dict(candidates.filter(pk__in=recent_ids).values_list("pk", "username"))
    results = [UserRef(id=pk, username=recent[pk]) for pk in recent_ids if pk in recent][:limit]
    if len(results) < limit:
        others = (
            candidates.exclude(pk__in=recent)
            .order_by(Lower("username"), "pk")
            .values_list("pk", "username")[: limit - len(results)]
        )
        results.extend(UserRef(id=pk, username=username) for pk, username in others)
    return results
