"""The only code that reads and writes chat data in Redis.

Each chat operation that reads and then writes is one Lua script over that chat's keys (one
hash slot). A user's chat list and the activity index live in other slots; they are indexes,
written with single-slot commands before the chat's script (so a failure between the calls
never hides a chat) and again after it, and the chat's members set stays the truth:

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
from enum import StrEnum
from typing import Any, NamedTuple

from django.utils.translation import gettext

from config import idempotency
from config.errors import Conflict
from config.lua_compose import Composed, Prelude, register
from config.redis import Batch, LuaScript, as_text, get_redis, scan_pages, scored

from . import keys
from .domain import ChatKind

_create_group = LuaScript.beside(__file__, "create_group")
_open_direct = LuaScript.beside(__file__, "open_direct")
# guarded: it takes an Idempotency-Key's binding and record as its last KEYS and ARGV
# (config/idempotency.py; a chat send's key has no binding: its record alone guards it).
# "seen": moving a member's seen id and dropping what every member has seen (lua/seen.lua).
register(Prelude.beside(__file__, "seen"))
_send = Composed.of(__file__, "send", preludes=("idempotency", "seen"))
_add_member = LuaScript.beside(__file__, "add_member")
_leave = Composed.of(__file__, "leave", preludes=("seen",))
_mark_read = Composed.of(__file__, "mark_read", preludes=("seen",))
_fetch_pending = Composed.of(__file__, "fetch_pending", preludes=("seen",))
_summary = LuaScript.beside(__file__, "summary")
_list_messages = LuaScript.beside(__file__, "list_messages")
_purge_old = LuaScript.beside(__file__, "purge_old")
_drop_idle = LuaScript.beside(__file__, "drop_idle")
_zrem_if_at_most = LuaScript.beside(__file__, "zrem_if_at_most")
_touch_contacts = LuaScript.beside(__file__, "touch_contacts")
_drop_orphan = LuaScript.beside(__file__, "drop_orphan")


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
    kind: ChatKind
    member_ids: tuple[int, ...]
    unread: int
    last_message: StoredMessage | None
    last_activity_ms: int


class AddMemberStatus(StrEnum):
    """What lua/add_member.lua answered."""

    ADDED = "added"
    MEMBER = "member"  # already one
    DIRECT = "direct"  # not a group chat
    FULL = "full"


@dataclass(frozen=True)
class AddMemberOutcome:
    status: AddMemberStatus
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


class IdleStatus(StrEnum):
    """What lua/drop_idle.lua answered for one chat."""

    DELETED = "deleted"
    ACTIVE = "active"  # touched since the cutoff: kept
    GONE = "gone"  # no such chat any more


@dataclass(frozen=True)
class IdleOutcome:
    chat_id: str
    status: IdleStatus
    version: int = 0
    member_ids: tuple[int, ...] = ()
    last_activity_ms: int = 0


class ChatIdTaken(Conflict):
    """A random group chat id collided with an existing chat (not expected in practice): 409,
    and the client's retry gets a fresh id."""

    def __init__(self, chat_id: str) -> None:
        super().__init__(gettext("A new chat could not be created; please retry."))
        self.chat_id = chat_id


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
        kind=ChatKind(as_text(kind)),
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


class Sent(NamedTuple):
    """A stored message and the chat's member ids; `replayed`: stored by an earlier request
    with the same Idempotency-Key (nothing was stored now)."""

    message: StoredMessage
    member_ids: tuple[int, ...]
    replayed: bool = False


def _sent(chat_id: str, result: Any, guard: idempotency.Guard) -> Sent | None:
    replay = guard.replayed(result)
    if replay is not None:
        result = replay.reply
    if result is None:
        return None
    raw, member_ids = result
    return Sent(_message(chat_id, raw), tuple(int(m) for m in member_ids), replay is not None)


def send(
    *, chat_id: str, sender_id: int, body: str, now_ms: int, guard: idempotency.Guard | None = None
) -> Sent | None:
    """Store a message with the chat's next id. None if the sender is not a member.

    Returns the message and the chat's member ids. With a `guard` (an Idempotency-Key) the
    record is stored with the message, and a send made before with it returns that message.
    """
    guard = guard or idempotency.Guard.none(keys.sequence(chat_id))
    result = _send.run(keys.chat_keys(chat_id), [sender_id, body, now_ms], guard=guard)
    return _sent(chat_id, result, guard)


def send_and_index(
    *,
    chat_id: str,
    sender_id: int,
    body: str,
    now_ms: int,
    contacts: tuple[Sequence[int], int] | None = None,
    guard: idempotency.Guard | None = None,
) -> Sent | None:
    """`send`, the activity index and (when given: ids, how many to keep) the sender's recent
    contacts in one Batch: one round trip on one Redis (one per node involved on a cluster).

    The activity entry is only moved forward where the chat is indexed already (XX GT): a send
    that fails (not a member) leaves no trace. The contacts are the caller's to get right: they
    are touched whatever the send answers (the caller passes the members it knows).
    """
    guard = guard or idempotency.Guard.none(keys.sequence(chat_id))
    batch = Batch()
    send_keys, send_args = _send.keys_and_args(
        keys.chat_keys(chat_id), [sender_id, body, now_ms], guard=guard
    )
    batch.script(_send, keys=send_keys, args=send_args)
    batch.command("ZADD", keys.activity(), "XX", "GT", now_ms, chat_id)
    if contacts and contacts[0]:
        ids, keep = contacts
        batch.script(
            _touch_contacts,
            keys=[keys.contacts(sender_id)],
            args=[keep, *reversed([int(c) for c in ids])],
        )
    return _sent(chat_id, batch.execute()[0], guard)


def add_member(
    *, chat_id: str, actor_id: int, user_id: int, now_ms: int, max_members: int
) -> AddMemberOutcome | None:
    """Add a member to a group chat. None if the actor is not a member."""
    result = _add_member(
        keys=keys.chat_keys(chat_id), args=[actor_id, user_id, now_ms, max_members]
    )
    if result is None:
        return None
    status = AddMemberStatus(as_text(result[0]))
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
    if as_text(result[0]) == "beyond":
        return ReadOutcome(unread=None, last_id=int(result[1]))
    return ReadOutcome(unread=int(result[1]))


# --- Reads and writes across a user's chats ---------------------------------------------------


def chat_ids_of(user_id: int) -> list[tuple[str, float]]:
    """The user's chat index: (chat id, membership version) pairs, possibly with stale ones."""
    return scored(get_redis().zrange(keys.user_chats(user_id), 0, -1, withscores=True))


def summaries(*, user_id: int, chat_ids: Sequence[str]) -> list[StoredChat | None]:
    """Each chat as the user sees it (None where they are not a member), one round trip."""
    if not chat_ids:
        return []
    batch = Batch()
    for chat_id in chat_ids:
        batch.script(_summary, keys=keys.chat_keys(chat_id), args=[user_id])
    return [
        None if raw is None else _chat(chat_id, raw)
        for chat_id, raw in zip(chat_ids, batch.execute(), strict=True)
    ]


def chat_ids_and_last_ids(
    user_id: int, chat_ids: Sequence[str]
) -> tuple[list[tuple[str, float]], list[int | None]]:
    """The user's chat index (as chat_ids_of) and the last message id of each of `chat_ids`
    (None: the chat has none, or is gone), in one round trip."""
    batch = Batch()
    batch.command("ZRANGE", keys.user_chats(user_id), 0, -1, "WITHSCORES")
    for chat_id in chat_ids:
        batch.command("GET", keys.sequence(chat_id))
    index, *last_ids = batch.execute()  # redis-py pairs a WITHSCORES reply, as in chat_ids_of
    return scored(index), [None if raw is None else int(raw) for raw in last_ids]


class Pending(NamedTuple):
    """A chat's unseen messages (now marked seen) and the seen id they leave."""

    messages: list[StoredMessage]
    seen: int


def fetch_pending(
    *, user_id: int, chat_ids: Sequence[str], limit_per_chat: int
) -> list[Pending | None]:
    """Unseen messages of each chat, marking them seen, in one round trip for all chats.

    None where the user is not a member.
    """
    if not chat_ids:
        return []
    batch = Batch()
    for chat_id in chat_ids:
        batch.script(
            _fetch_pending, keys=keys.pending_keys(chat_id), args=[user_id, limit_per_chat]
        )
    results: list[Pending | None] = []
    for chat_id, reply in zip(chat_ids, batch.execute(), strict=True):
        if reply is None:
            results.append(None)
            continue
        seen, flat = reply
        results.append(Pending([_message(chat_id, raw) for raw in flat[0::2]], int(seen)))
    return results


def list_messages(
    *, chat_id: str, user_id: int, after: int, limit: int
) -> list[StoredMessage] | None:
    """A page of stored messages after `after`, oldest first. None if not a member."""
    result = _list_messages(keys=keys.chat_keys(chat_id), args=[user_id, after, limit])
    if result is None:
        return None
    return [_message(chat_id, raw) for raw in result]


def is_member(*, chat_id: str, user_id: int) -> bool:
    return get_redis().zscore(keys.members(chat_id), user_id) is not None


def reserve_index(*, chat_id: str, user_ids: Iterable[int], now_ms: int) -> None:
    """Put the chat in these users' lists and in the activity index BEFORE the script that
    makes them members, so that a failure between the two calls leaves at worst a stale
    entry (skipped and dropped by readers), never a chat its members cannot find.

    The entries are scored with the lowest version the script can give (`now_ms * 1000`, see
    lua/*.lua), so a later leave still removes them; ZADD GT never lowers a newer entry. The
    activity entry is only added where missing (NX): the chat's real activity follows after
    the script, and an inflated one would keep an idle chat from its sweep.
    """
    batch = Batch()
    for user_id in user_ids:
        batch.command("ZADD", keys.user_chats(user_id), "GT", now_ms * 1000, chat_id)
    batch.command("ZADD", keys.activity(), "NX", now_ms, chat_id)
    batch.execute()


def index_chat(
    *, chat_id: str, user_ids: Iterable[int], version: int, activity_ms: int | None
) -> None:
    """Add the chat to these users' chat lists (and to the activity index), one round trip."""
    batch = Batch()
    for user_id in user_ids:
        batch.command("ZADD", keys.user_chats(user_id), "GT", version, chat_id)
    if activity_ms is not None:
        batch.command("ZADD", keys.activity(), "GT", activity_ms, chat_id)
    batch.execute()


def unindex_chat(
    *, chat_id: str, user_ids: Iterable[int], version: int, activity_ms: int | None
) -> None:
    """Drop the chat from these users' lists where their entry is not newer than `version`,
    and from the activity index if its activity there is not newer than `activity_ms`."""
    batch = Batch()
    for user_id in user_ids:
        batch.script(_zrem_if_at_most, keys=[keys.user_chats(user_id)], args=[chat_id, version])
    if activity_ms is not None:
        batch.script(_zrem_if_at_most, keys=[keys.activity()], args=[chat_id, activity_ms])
    batch.execute()


def drop_stale(*, user_id: int, entries: Sequence[tuple[str, float]]) -> None:
    """Remove chat-list entries a reader found stale, unless re-added since it read them."""
    if not entries:
        return
    batch = Batch()
    for chat_id, version in entries:
        batch.script(_zrem_if_at_most, keys=[keys.user_chats(user_id)], args=[chat_id, version])
    batch.execute()


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
            yield [chat for chat, _score in scored(entries)]
        if cursor == 0:
            return


def purge_old(*, chat_ids: Sequence[str], cutoff_ms: int, batch: int) -> list[tuple[int, bool]]:
    """Remove up to `batch` messages older than the cutoff from each chat, one round trip.

    Returns (removed, more left) per chat.
    """
    calls = Batch()
    for chat_id in chat_ids:
        calls.script(_purge_old, keys=keys.chat_keys(chat_id), args=[cutoff_ms, batch])
    return [(int(removed), bool(more)) for removed, more in calls.execute()]


def idle_candidates(*, cutoff_ms: int, batch: int) -> list[tuple[str, int]]:
    """Chats whose indexed activity is older than the cutoff, oldest first, at most `batch`."""
    entries = get_redis().zrange(
        keys.activity(), "-inf", f"({cutoff_ms}", byscore=True, offset=0, num=batch, withscores=True
    )
    return [(chat, int(score)) for chat, score in scored(entries)]


def drop_idle(*, chat_ids: Sequence[str], cutoff_ms: int) -> list[IdleOutcome]:
    """Delete each chat if it has really been idle since the cutoff, one round trip."""
    batch = Batch()
    for chat_id in chat_ids:
        batch.script(_drop_idle, keys=keys.chat_keys(chat_id), args=[cutoff_ms])
    outcomes = []
    for chat_id, result in zip(chat_ids, batch.execute(), strict=True):
        status = IdleStatus(as_text(result[0]))
        if status is IdleStatus.DELETED:
            outcomes.append(
                IdleOutcome(
                    chat_id,
                    status,
                    version=int(result[1]),
                    member_ids=tuple(int(m) for m in result[2]),
                )
            )
        elif status is IdleStatus.ACTIVE:
            outcomes.append(IdleOutcome(chat_id, status, last_activity_ms=int(result[1])))
        else:
            outcomes.append(IdleOutcome(chat_id, status))
    return outcomes


def reindex_after_idle_sweep(outcomes: Sequence[IdleOutcome], indexed_ms: dict[str, int]) -> None:
    """Bring the indexes in line with a sweep, one round trip: deleted and vanished chats
    leave their members' lists and the activity index; chats found active get their real
    activity back in the index so they stop being nominated."""
    batch = Batch()
    for outcome in outcomes:
        if outcome.status is IdleStatus.ACTIVE:
            batch.command("ZADD", keys.activity(), "GT", outcome.last_activity_ms, outcome.chat_id)
            continue
        for user_id in outcome.member_ids:
            batch.script(
                _zrem_if_at_most,
                keys=[keys.user_chats(user_id)],
                args=[outcome.chat_id, outcome.version],
            )
        batch.script(
            _zrem_if_at_most,
            keys=[keys.activity()],
            args=[outcome.chat_id, indexed_ms[outcome.chat_id]],
        )
    batch.execute()


# --- Orphans: chats and users the database no longer has, indexes lost ---------------------------


@dataclass(frozen=True)
class ChatState:
    """What the orphan sweep needs of a chat: None fields when it has no meta (it is gone)."""

    chat_id: str
    kind: ChatKind | None
    version: int
    last_activity_ms: int | None
    member_ids: tuple[int, ...]


def scan_ids(pattern: str, batch: int) -> Iterator[list[str]]:
    """Names of the keys matching `pattern`, a page at a time (SCAN MATCH COUNT: each call is
    bounded; a key may come twice, so what is done with a page must be idempotent)."""
    return scan_pages(pattern, batch)


def chat_states(chat_ids: Sequence[str]) -> list[ChatState]:
    """Kind, membership version, activity and members of each chat, one round trip."""
    batch = Batch()
    for chat_id in chat_ids:
        batch.command("HMGET", keys.meta(chat_id), "kind", "mver", "last_ms")
        batch.command("ZRANGE", keys.members(chat_id), 0, -1)
    replies = batch.execute()
    states = []
    for i, chat_id in enumerate(chat_ids):
        (kind, version, last_ms), members = replies[2 * i], replies[2 * i + 1]
        states.append(
            ChatState(
                chat_id=chat_id,
                kind=None if last_ms is None else ChatKind(as_text(kind)),
                version=int(version or 0),
                last_activity_ms=None if last_ms is None else int(last_ms),
                member_ids=tuple(int(m) for m in members),
            )
        )
    return states


def restore_index_entries(states: Sequence[ChatState]) -> int:
    """Put live chats back into the activity index and their members' chat lists where an
    entry is missing (ZADD NX / GT never move an entry back); returns how many were missing.

    A member who leaves meanwhile may get a stale entry back: readers skip and drop it.
    """
    batch = Batch()
    for state in states:
        if state.last_activity_ms is None:
            continue
        batch.command("ZADD", keys.activity(), "NX", state.last_activity_ms, state.chat_id)
        for user_id in state.member_ids:
            batch.command("ZADD", keys.user_chats(user_id), "GT", state.version, state.chat_id)
    return sum(int(added) for added in batch.execute())


def drop_orphans(chats: Sequence[tuple[str, bool]]) -> int:
    """Remove the stray keys of each (chat id, sequence too) that has no meta, one round trip;
    chats that exist are left alone. Returns how many keys were removed."""
    if not chats:
        return 0
    batch = Batch()
    for chat_id, with_sequence in chats:
        batch.script(_drop_orphan, keys=keys.chat_keys(chat_id), args=[int(with_sequence)])
    return sum(max(int(removed), 0) for removed in batch.execute())


def forget_user(user_id: int) -> int:
    """Remove a user's chat list and recent contacts (one slot); returns keys removed."""
    return int(get_redis().unlink(keys.user_chats(user_id), keys.contacts(user_id)))
