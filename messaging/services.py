"""Changing chats: create, open direct, send, read, pending fetch, join, leave, retention.

Each function validates everything it can against the database first (nothing is written
when it refuses), then runs one Lua script on the chat's keys, then updates the indexes that
live outside the chat's hash slot (users' chat lists, the activity index, recent contacts).
Joining writes the index entries before the script as well, so that Redis failing between
the two calls never leaves a chat its members cannot find (store.reserve_index).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils.translation import gettext as _

from config import idempotency, metrics, timestamps
from config.users import User
from directory import cache as directory

from . import held_fetches, keys, store
from .domain import (
    Chat,
    ChatKind,
    ChatNotFound,
    InvalidChatRequest,
    Message,
    PartnerInactive,
    PendingMessages,
    UserRef,
)
from .selectors import (
    present_chats,
    present_message,
    present_messages,
    require_chat_id,
    stored_chat,
)
from .store import AddMemberStatus, IdleStatus, StoredChat

DAY_MS = 24 * 60 * 60 * 1000


def _me(user: AbstractBaseUser) -> UserRef:
    return UserRef(id=user.pk, username=user.get_username())


def validate_body(body: str, field: str = "body") -> str:
    """The body as given, if it is not blank and not too long."""
    if not body.strip():
        raise InvalidChatRequest(field, _("A message cannot be empty."))
    try:
        body.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, which JSON's \ud800 escapes can carry
        raise InvalidChatRequest(field, _("A message must be valid Unicode text.")) from None
    limit = settings.CHAT_MESSAGE_MAX_LENGTH
    if len(body) > limit:
        raise InvalidChatRequest(
            field,
            _("A message can have at most %(limit)d characters (this one has %(length)d).")
            % {"limit": limit, "length": len(body)},
        )
    return body


def _require_active_users(user_ids: Iterable[int], field: str) -> set[int]:
    wanted = {int(pk) for pk in user_ids}
    found = set(
        get_user_model().objects.filter(pk__in=wanted, is_active=True).values_list("pk", flat=True)
    )
    missing = sorted(wanted - found)
    if missing:
        listed = ", ".join(str(pk) for pk in missing)
        raise InvalidChatRequest(field, _("No active user with id %(ids)s.") % {"ids": listed})
    return wanted


def _touch_contacts(user: AbstractBaseUser, contact_ids: Iterable[int]) -> None:
    keep = settings.CHAT_RECENT_CONTACTS
    others = [pk for pk in dict.fromkeys(contact_ids) if pk != user.pk]
    # More than the list keeps would only be trimmed again: that bounds the work per send.
    store.touch_contacts(user_id=user.pk, contact_ids=others[:keep], keep=keep)


# --- Creating and opening chats -----------------------------------------------------------------


def chat_create_group(*, creator: User, member_ids: Iterable[int], message: str) -> Chat:
    """A new group chat of the creator and these users, `message` its first message."""
    validate_body(message, field="message")
    others = {int(pk) for pk in member_ids} - {creator.pk}
    if not others:
        raise InvalidChatRequest("members", _("A group chat needs at least one other member."))
    limit = settings.CHAT_MAX_MEMBERS
    if len(others) + 1 > limit:
        raise InvalidChatRequest(
            "members", _("A chat can have at most %(limit)d members.") % {"limit": limit}
        )
    _require_active_users(others, field="members")

    chat_id = f"g-{secrets.token_hex(8)}"
    everyone = sorted(others | {creator.pk})
    at = timestamps.now_ms()
    store.reserve_index(chat_id=chat_id, user_ids=everyone, now_ms=at)
    version, first = store.create_group(
        chat_id=chat_id, creator_id=creator.pk, member_ids=everyone, body=message, now_ms=at
    )
    store.index_chat(chat_id=chat_id, user_ids=everyone, version=version, activity_ms=at)
    _touch_contacts(creator, sorted(others))
    # The creator's view is known without asking Redis again: they have seen their message.
    return present_chats(
        [
            StoredChat(
                id=chat_id,
                kind=ChatKind.GROUP,
                member_ids=tuple(everyone),
                unread=0,
                last_message=first,
                last_activity_ms=first.sent_ms,
            )
        ]
    )[0]


def chat_open_direct(*, user: User, other_id: int) -> Chat:
    """The one direct chat of the pair, created on first use; both are members afterwards."""
    other_id = int(other_id)
    if other_id == user.pk:
        raise InvalidChatRequest("user", _("A direct chat needs another user than yourself."))
    _require_active_users([other_id], field="user")
    chat_id = keys.direct_chat_id(user.pk, other_id)
    at = timestamps.now_ms()
    store.reserve_index(chat_id=chat_id, user_ids=[user.pk, other_id], now_ms=at)
    joined, version = store.open_direct(
        chat_id=chat_id, user_id=user.pk, other_id=other_id, now_ms=at
    )
    # Re-adding both costs nothing and repairs an entry a lost index write left out.
    store.index_chat(
        chat_id=chat_id,
        user_ids=[user.pk, other_id],
        version=version,
        activity_ms=at if joined else None,
    )
    _touch_contacts(user, [other_id])
    return present_chats([stored_chat(user_id=user.pk, chat_id=chat_id)])[0]


# --- Messages -----------------------------------------------------------------------------------


def message_send(
    *, user: User, chat_id: str, body: str, idempotency_key: str | None = None
) -> Message:
    """Send to a chat the user is a member of; the message gets the chat's next id.

    The sender's own message counts as seen by them when they had seen everything before it.
    With an `idempotency_key` (SPEC 11), a repeat of the same send by the same user within
    IDEMPOTENCY_TTL_SECONDS returns the first one's message (`Message.replayed`) and stores
    nothing; the same key with another body raises KeyReused.
    """
    require_chat_id(chat_id)
    validate_body(body)
    pair = keys.direct_pair(chat_id)
    if pair is not None and user.pk in pair:
        # Only a member learns this (anyone else gets 404 from the send below); from the
        # per-process directory, so a steady run of sends costs no database query.
        partner = pair[0] if pair[1] == user.pk else pair[1]
        if not directory.user_is_active(partner):
            raise PartnerInactive
    key = idempotency.clean_key(idempotency_key)
    guard = None
    if key is not None:
        guard = idempotency.Guard(
            record=keys.idempotency(chat_id, user.pk, key),
            fingerprint=idempotency.fingerprint(
                scope=f"u:{user.pk}", operation="chat-send", request={"chat": chat_id, "body": body}
            ),
        )
    # One round trip: the send, the activity index and, when this process does not know the
    # chat's members yet, nothing more; its next send in the chat moves them to the front of
    # the sender's recent contacts in the same round trip (see _last_sent).
    known = _last_sent.get(user.pk)
    members = known[1] if known and known[0] == chat_id else None
    keep = settings.CHAT_RECENT_CONTACTS
    sent = store.send_and_index(
        chat_id=chat_id,
        sender_id=user.pk,
        body=body,
        now_ms=timestamps.now_ms(),
        contacts=None if members is None else (_others(user, members)[:keep], keep),
        guard=guard,
    )
    if sent is None:
        _last_sent.pop(user.pk, None)
        raise ChatNotFound(chat_id)
    message, member_ids, replayed = sent
    if replayed:
        metrics.IDEMPOTENT_REPLAYS.labels("chat-send").inc()
    if member_ids != members:
        _touch_contacts(user, member_ids)  # new to this process, or the members changed
    _last_sent[user.pk] = (chat_id, member_ids)
    return dataclasses.replace(present_message(message, {user.pk: _me(user)}), replayed=replayed)


# Per process: the chat each user last sent to and its members then, so a run of sends into
# one chat touches the sender's recent contacts in the send's own round trip.
_last_sent: dict[int, tuple[str, tuple[int, ...]]] = {}


def _others(user: User, member_ids: Iterable[int]) -> list[int]:
    return [pk for pk in dict.fromkeys(member_ids) if pk != user.pk]


def chat_mark_read(*, user: User, chat_id: str, up_to: int) -> int:
    """Mark the chat's messages up to `up_to` seen; returns how many remain unread."""
    outcome = store.mark_read(chat_id=require_chat_id(chat_id), user_id=user.pk, up_to=up_to)
    if outcome is None:
        raise ChatNotFound(chat_id)
    if outcome.unread is None:
        raise InvalidChatRequest(
            "up_to",
            _("There is no message %(up_to)d in this chat yet (the last is %(last)d).")
            % {"up_to": up_to, "last": outcome.last_id},
        )
    return outcome.unread


def messages_fetch_pending(*, user: User) -> list[PendingMessages]:
    """Every unseen message in all the user's chats (up to CHAT_PENDING_MAX_PER_CHAT per
    chat per call), marking them seen. Two Redis round trips however many chats; one when
    nothing is new and this process fetched for the user last time (held_fetches)."""
    held = held_fetches.held(user.pk)
    seen: dict[str, int] = {}
    if held is None:
        entries = store.chat_ids_of(user.pk)
        due = entries
    else:
        entries, last_ids = store.chat_ids_and_last_ids(user.pk, [c for c, _ in held.entries])
        if tuple(entries) == held.entries:
            # Only the chats with a message past what was seen; the others keep their mark.
            due = []
            for entry, last_id in zip(entries, last_ids, strict=True):
                mark = held.seen.get(entry[0])
                if mark is None or last_id is None or last_id > mark:
                    due.append(entry)
                else:
                    seen[entry[0]] = mark
        else:
            due = entries  # joined, left or made again since: every chat
    found = store.fetch_pending(
        user_id=user.pk,
        chat_ids=[chat for chat, _ in due],
        limit_per_chat=settings.CHAT_PENDING_MAX_PER_CHAT,
    )
    stale = [entry for entry, pending in zip(due, found, strict=True) if pending is None]
    store.drop_stale(user_id=user.pk, entries=stale)
    seen.update((chat, p.seen) for (chat, _), p in zip(due, found, strict=True) if p is not None)
    gone = set(stale)
    held_fetches.hold(user.pk, tuple(e for e in entries if e not in gone), seen)
    batches = [p.messages for p in found if p is not None and p.messages]
    presented = present_messages([m for msgs in batches for m in msgs])
    results, start = [], 0
    for msgs in batches:
        results.append(
            PendingMessages(
                chat=msgs[0].chat_id, messages=tuple(presented[start : start + len(msgs)])
            )
        )
        start += len(msgs)
    return results


# --- Membership -----------------------------------------------------------------------------------


def chat_add_member(*, user: User, chat_id: str, new_member_id: int) -> Chat:
    """Add a user to a group chat the acting user belongs to (a no-op for a member)."""
    require_chat_id(chat_id)
    [new_member_id] = _require_active_users([new_member_id], field="user")
    # Only a member may put the chat in someone's list, even as an entry readers would drop.
    if not store.is_member(chat_id=chat_id, user_id=user.pk):
        raise ChatNotFound(chat_id)
    at = timestamps.now_ms()
    store.reserve_index(chat_id=chat_id, user_ids=[new_member_id], now_ms=at)
    outcome = store.add_member(
        chat_id=chat_id,
        actor_id=user.pk,
        user_id=new_member_id,
        now_ms=at,
        max_members=settings.CHAT_MAX_MEMBERS,
    )
    if outcome is None:
        raise ChatNotFound(chat_id)
    if outcome.status is AddMemberStatus.DIRECT:
        raise InvalidChatRequest("user", _("Members can only be added to group chats."))
    if outcome.status is AddMemberStatus.FULL:
        raise InvalidChatRequest(
            "user",
            _("This chat already has the most members allowed (%(limit)d).")
            % {"limit": settings.CHAT_MAX_MEMBERS},
        )
    if outcome.status is AddMemberStatus.ADDED:
        store.index_chat(
            chat_id=chat_id, user_ids=[new_member_id], version=outcome.version, activity_ms=at
        )
        _touch_contacts(user, [new_member_id])
    return present_chats([stored_chat(user_id=user.pk, chat_id=chat_id)])[0]


def chat_leave(*, user: User, chat_id: str) -> None:
    """Leave a chat; the last member out deletes it with all its messages."""
    if member_remove(user_id=user.pk, chat_id=require_chat_id(chat_id)) is None:
        raise ChatNotFound(chat_id)


def member_remove(*, user_id: int, chat_id: str) -> bool | None:
    """Take a user out of a chat, as leaving does (also for users deleted from the database).

    Returns whether the chat is gone (they were its last member), None if not a member.
    """
    outcome = store.leave(chat_id=chat_id, user_id=user_id, now_ms=timestamps.now_ms())
    if outcome is None:
        return None
    store.unindex_chat(
        chat_id=chat_id,
        user_ids=[user_id],
        version=outcome.version,
        activity_ms=outcome.last_activity_ms if outcome.deleted else None,
    )
    return outcome.deleted


# --- Retention (Celery beat) ----------------------------------------------------------------------


@dataclass(frozen=True)
class ChatRetentionReport:
    """What one retention sweep did: how many messages it removed from how many chats."""

    chats: int
    removed: int

    def __str__(self) -> str:
        return f"{self.removed} removed from {self.chats} chats"


def messages_purge_old(*, at_ms: int | None = None) -> ChatRetentionReport:
    """Remove messages older than CHAT_MESSAGE_RETENTION_DAYS from every chat.

    Chats are visited a batch at a time and each script call removes at most a batch of
    messages, so no single Redis call runs long however much there is to remove.
    """
    cutoff = (
        timestamps.now_ms() if at_ms is None else at_ms
    ) - settings.CHAT_MESSAGE_RETENTION_DAYS * DAY_MS
    batch = settings.CHAT_SWEEP_BATCH
    touched: set[str] = set()
    removed = 0
    for page in store.scan_chat_ids(batch):
        todo = page
        while todo:
            results = store.purge_old(chat_ids=todo, cutoff_ms=cutoff, batch=batch)
            touched.update(chat for chat, (n, _more) in zip(todo, results, strict=True) if n)
            removed += sum(n for n, _more in results)
            # Chats with a full batch removed may hold more: they go round again.
            todo = [chat for chat, (_n, more) in zip(todo, results, strict=True) if more]
    return ChatRetentionReport(chats=len(touched), removed=removed)


def chats_drop_idle(*, at_ms: int | None = None) -> int:
    """Delete chats nobody has touched for CHAT_IDLE_DAYS, a batch at a time; returns how many."""
    cutoff = (timestamps.now_ms() if at_ms is None else at_ms) - settings.CHAT_IDLE_DAYS * DAY_MS
    batch = settings.CHAT_SWEEP_BATCH
    dropped = 0
    # Every round removes or re-scores each candidate it saw, so the loop ends; the bound
    # only guards against a clock gone wild re-nominating the same chats.
    for _round in range(10_000):
        candidates = store.idle_candidates(cutoff_ms=cutoff, batch=batch)
        if not candidates:
            break
        indexed = dict(candidates)
        outcomes = store.drop_idle(chat_ids=list(indexed), cutoff_ms=cutoff)
        store.reindex_after_idle_sweep(outcomes, indexed)
        dropped += sum(1 for o in outcomes if o.status is IdleStatus.DELETED)
    return dropped
