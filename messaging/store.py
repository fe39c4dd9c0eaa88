"""The only code that reads and writes chat data in Redis.

Each chat operation that reads and then writes is one Lua script over that chat's keys (one
hash slot). A user's chat list and the activity index live in other slots; they are indexes,
written after the chat's script with single-slot commands, and the chat's members set stays
the truth:

- a user's chat list is scored with the membership version of the change that added the
  chat; additions use ZADD GT and removals remove only entries at or below the version of
  the removing change, so a late write can leave a stale entry but never hide a chat;
- readers check membership against the chat (every chat script answers `false` for a
  non-member) and drop the stale entries they meet, by the same conditional removal.

Works on one Redis and on Redis Cluster alike (no script spans two slots).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext

from config.errors import Conflict
from config.redis import LuaScript, get_redis

from . import keys

_create_group = LuaScript.beside(__file__, "create_group")
_open_direct = LuaScript.beside(__file__, "open_direct")
_send = LuaScript.beside(__file__, "send")
_add_member = LuaScript.beside(__file__, "add_member")
_leave = LuaScript.beside(__file__, "leave")
_mark_read = LuaScript.beside(__file__, "mark_read")
_fetch_pending = LuaScript.beside(__file__, "fetch_pending")
_summary = LuaScript.beside(__file__, "summary")
_list_messages = LuaScript.beside(__file__, "list_messages")
_purge_old = LuaScript.beside(__file__, "purge_old")
_drop_idle = LuaScript.beside(__file__, "drop_idle")
_zrem_if_at_most = LuaScript.beside(__file__, "zrem_if_at_most")
_touch_contacts = LuaScript.beside(__file__, "touch_contacts")


@dataclass(frozen=True)
class StoredMessage:
    id: int
    chat_id: str
    sender_id: int
    body: str
    sent_ms: int


@dataclass(frozen=True)
class StoredChat:
    """A chat as one member sees it, as Redis holds it (user ids, times in ms)."""

    id: str
    kind: str
    member_ids: tuple[int, ...]
    unread: int
    last_message: StoredMessage | None
    last_activity_ms: int


@dataclass(frozen=True)
class AddMemberOutcome:
    status: str  # "added", "member" (already one), "direct" (not a group) or "full"
    version: int = 0


@dataclass(frozen=True)
class LeaveOutcome:
    deleted: bool
    version: int
    last_activity_ms: int


@dataclass(frozen=True)
class ReadOutcome:
    unread: int | None  # None when up_to is beyond the last message
    last_id: int = 0


@dataclass(frozen=True)
class IdleOutcome:
    chat_id: str
    status: str  # "deleted", "active" or "gone"
    version: int = 0
    member_ids: tuple[int, ...] = ()
    last_activity_ms: int = 0


class ChatIdTaken(Conflict):
    """A random group chat id collided with an existing chat (not expected in practice): 409,
    and the client's retry gets a fresh id."""

    def __init__(self, chat_id: str) -> None:
        super().__init__(gettext("A new chat could not be created; please retry."))
        self.chat_id = chat_id


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _message(chat_id: str, raw: bytes | str) -> StoredMessage:
    data = json.loads(raw)
    return StoredMessage(
        id=int(data["id"]),
        chat_id=chat_id,
        sender_id=int(data["sender"]),
        body=data["body"],
        sent_ms=int(data["ts"]),
    )


def _chat(chat_id: str, raw: list[Any]) -> StoredChat:
    kind, last_ms, last_json, joined_at, unread, member_ids = raw
    last = _message(chat_id, last_json) if last_json else None
    # A member who joined later never sees what was sent before, not even as a preview.
    if last is not None and last.id <= int(joined_at):
        last = None
    return StoredChat(
        id=chat_id,
        kind=_text(kind),
        member_ids=tuple(int(m) for m in member_ids),
        unread=int(unread),
        last_message=last,
        last_activity_ms=int(last_ms),
    )


# --- Writes inside one chat -------------------------------------------------------------------


def create_group(
    *, chat_id: str, creator_id: int, member_ids: Sequence[int], body: str, now_ms: int
) -> tuple[int, StoredMessage]:
    """Create the chat with its members (creator included) and first message.

    Returns the membership version and the first message.
    """
    result = _create_group(
        keys=keys.chat_keys(chat_id), args=[now_ms, creator_id, body, *member_ids]
    )
    if result is None:
        raise ChatIdTaken(chat_id)
    version, raw = result
    return int(version), _message(chat_id, raw)


def open_direct(*, chat_id: str, user_id: int, other_id: int, now_ms: int) -> tuple[int, int]:
    """Create the pair's chat if missing and make both members.

    Returns (how many of the pair joined just now, membership version).
    """
    joined, version = _open_direct(keys=keys.chat_keys(chat_id), args=[now_ms, user_id, other_id])
    return int(joined), int(version)


def send(
    *, chat_id: str, sender_id: int, body: str, now_ms: int
) -> tuple[StoredMessage, tuple[int, ...]] | None:
    """Store a message with the chat's next id. None if the sender is not a member.

    Returns the message and the chat's member ids.
    """
    result = _send(keys=keys.chat_keys(chat_id), args=[sender_id, body, now_ms])
    if result is None:
        return None
    raw, member_ids = result
    return _message(chat_id, raw), tuple(int(m) for m in member_ids)


def add_member(
    *, chat_id: str, actor_id: int, user_id: int, now_ms: int, max_members: int
) -> AddMemberOutcome | None:
    """Add a member to a group chat. None if the actor is not a member."""
    result = _add_member(
        keys=keys.chat_keys(chat_id), args=[actor_id, user_id, now_ms, max_members]
    )
    if result is None:
        return None
    status = _text(result[0])
    return AddMemberOutcome(status=status, version=int(result[1]) if len(result) > 1 else 0)


def leave(*, chat_id: str, user_id: int, now_ms: int) -> LeaveOutcome | None:
    """Remove a member (the last one deletes the chat). None if they are not a member."""
    result = _leave(keys=keys.chat_keys(chat_id), args=[user_id, now_ms])
    if result is None:
        return None
    deleted, version, last_ms = result
    return LeaveOutcome(deleted=bool(deleted), version=int(version), last_activity_ms=int(last_ms))


def mark_read(*, chat_id: str, user_id: int, up_to: int) -> ReadOutcome | None:
    """Advance a member's seen id to `up_to`. None if they are not a member."""
    result = _mark_read(keys=keys.chat_keys(chat_id), args=[user_id, up_to])
    if result is None:
        return None
    if _text(result[0]) == "beyond":
        return ReadOutcome(unread=None, last_id=int(result[1]))
    return ReadOutcome(unread=int(result[1]))


# --- Reads and writes across a user's chats ---------------------------------------------------


def chat_ids_of(user_id: int) -> list[tuple[str, float]]:
    """The user's chat index: (chat id, membership version) pairs, possibly with stale ones."""
    return [
        (_text(chat), score)
        for chat, score in get_redis().zrange(keys.user_chats(user_id), 0, -1, withscores=True)
    ]


def summaries(*, user_id: int, chat_ids: Sequence[str]) -> list[StoredChat | None]:
    """Each chat as the user sees it (None where they are not a member), one round trip."""
    if not chat_ids:
        return []
    pipe = get_redis().pipeline(transaction=False)
    for chat_id in chat_ids:
        _summary(keys=keys.chat_keys(chat_id), args=[user_id], client=pipe)
    return [
        None if raw is None else _chat(chat_id, raw)
        for chat_id, raw in zip(chat_ids, pipe.execute(), strict=True)
    ]


def fetch_pending(
    *, user_id: int, chat_ids: Sequence[str], limit_per_chat: int
) -> list[list[StoredMessage] | None]:
    """Unseen messages of each chat, marking them seen, in one round trip for all chats.

    None where the user is not a member.
    """
    if not chat_ids:
        return []
    pipe = get_redis().pipeline(transaction=False)
    for chat_id in chat_ids:
        _fetch_pending(keys=keys.chat_keys(chat_id), args=[user_id, limit_per_chat], client=pipe)
    results: list[list[StoredMessage] | None] = []
    for chat_id, flat in zip(chat_ids, pipe.execute(), strict=True):
        results.append(None if flat is None else [_message(chat_id, raw) for raw in flat[0::2]])
    return results


def list_messages(
    *, chat_id: str, user_id: int, after: int, limit: int
) -> list[StoredMessage] | None:
    """A page of stored messages after `after`, oldest first. None if not a member."""
    result = _list_messages(keys=keys.chat_keys(chat_id), args=[user_id, after, limit])
    if result is None:
        return None
    return [_message(chat_id, raw) for raw in result]


def index_chat(
    *, chat_id: str, user_ids: Iterable[int], version: int, activity_ms: int | None
) -> None:
    """Add the chat to these users' chat lists (and to the activity index), one round trip."""
    pipe = get_redis().pipeline(transaction=False)
    for user_id in user_ids:
        pipe.zadd(keys.user_chats(user_id), {chat_id: version}, gt=True)
    if activity_ms is not None:
        pipe.zadd(keys.activity(), {chat_id: activity_ms}, gt=True)
    pipe.execute()


def unindex_chat(
    *, chat_id: str, user_ids: Iterable[int], version: int, activity_ms: int | None
) -> None:
    """Drop the chat from these users' lists where their entry is not newer than `version`,
    and from the activity index if its activity there is not newer than `activity_ms`."""
    pipe = get_redis().pipeline(transaction=False)
    for user_id in user_ids:
        _zrem_if_at_most(keys=[keys.user_chats(user_id)], args=[chat_id, version], client=pipe)
    if activity_ms is not None:
        _zrem_if_at_most(keys=[keys.activity()], args=[chat_id, activity_ms], client=pipe)
    if len(pipe):  # a Pipeline is always truthy
        pipe.execute()


def drop_stale(*, user_id: int, entries: Sequence[tuple[str, float]]) -> None:
    """Remove chat-list entries a reader found stale, unless re-added since it read them."""
    if not entries:
        return
    pipe = get_redis().pipeline(transaction=False)
    for chat_id, version in entries:
        _zrem_if_at_most(keys=[keys.user_chats(user_id)], args=[chat_id, version], client=pipe)
    pipe.execute()


def touch_activity(*, chat_id: str, activity_ms: int) -> None:
    """Record activity in the index the idle sweep reads (never moves backwards)."""
    get_redis().zadd(keys.activity(), {chat_id: activity_ms}, gt=True)


# --- Recent contacts ----------------------------------------------------------------------------


def touch_contacts(*, user_id: int, contact_ids: Sequence[int], keep: int) -> None:
    """Move these users to the front of the user's recent contacts (the first one frontmost)."""
    if contact_ids:
        _touch_contacts(
            keys=[keys.contacts(user_id)], args=[keep, *reversed([int(c) for c in contact_ids])]
        )


def recent_contacts(user_id: int) -> list[int]:
    """The user's recent contacts, most recent first."""
    return [int(c) for c in get_redis().lrange(keys.contacts(user_id), 0, -1)]


# --- Retention ----------------------------------------------------------------------------------


def scan_chat_ids(batch: int) -> Iterator[list[str]]:
    """Every chat in the activity index, a batch at a time (ZSCAN: no long Redis call)."""
    client = get_redis()
    cursor = 0
    while True:
        cursor, entries = client.zscan(keys.activity(), cursor, count=batch)
        if entries:
            yield [_text(chat) for chat, _score in entries]
        if cursor == 0:
            return


def purge_old(*, chat_ids: Sequence[str], cutoff_ms: int, batch: int) -> list[tuple[int, bool]]:
    """Remove up to `batch` messages older than the cutoff from each chat, one round trip.

    Returns (removed, more left) per chat.
    """
    pipe = get_redis().pipeline(transaction=False)
    for chat_id in chat_ids:
        _purge_old(keys=keys.chat_keys(chat_id), args=[cutoff_ms, batch], client=pipe)
    return [(int(removed), bool(more)) for removed, more in pipe.execute()]


def idle_candidates(*, cutoff_ms: int, batch: int) -> list[tuple[str, int]]:
    """Chats whose indexed activity is older than the cutoff, oldest first, at most `batch`."""
    entries = get_redis().zrange(
        keys.activity(), "-inf", f"({cutoff_ms}", byscore=True, offset=0, num=batch, withscores=True
    )
    return [(_text(chat), int(score)) for chat, score in entries]


def drop_idle(*, chat_ids: Sequence[str], cutoff_ms: int) -> list[IdleOutcome]:
    """Delete each chat if it has really been idle since the cutoff, one round trip."""
    pipe = get_redis().pipeline(transaction=False)
    for chat_id in chat_ids:
        _drop_idle(keys=keys.chat_keys(chat_id), args=[cutoff_ms], client=pipe)
    outcomes = []
    for chat_id, result in zip(chat_ids, pipe.execute(), strict=True):
        status = _text(result[0])
        if status == "deleted":
            outcomes.append(
                IdleOutcome(
                    chat_id,
                    status,
                    version=int(result[1]),
                    member_ids=tuple(int(m) for m in result[2]),
                )
            )
        elif status == "active":
            outcomes.append(IdleOutcome(chat_id, status, last_activity_ms=int(result[1])))
        else:
            outcomes.append(IdleOutcome(chat_id, status))
    return outcomes


def reindex_after_idle_sweep(outcomes: Sequence[IdleOutcome], indexed_ms: dict[str, int]) -> None:
    """Bring the indexes in line with a sweep, one round trip: deleted and vanished chats
    leave their members' lists and the activity index; chats found active get their real
    activity back in the index so they stop being nominated."""
    pipe = get_redis().pipeline(transaction=False)
    for outcome in outcomes:
        if outcome.status == "active":
            pipe.zadd(keys.activity(), {outcome.chat_id: outcome.last_activity_ms}, gt=True)
            continue
        for user_id in outcome.member_ids:
            _zrem_if_at_most(
                keys=[keys.user_chats(user_id)],
                args=[outcome.chat_id, outcome.version],
                client=pipe,
            )
        _zrem_if_at_most(
            keys=[keys.activity()], args=[outcome.chat_id, indexed_ms[outcome.chat_id]], client=pipe
        )
    if len(pipe):  # a Pipeline is always truthy
        pipe.execute()
