"""The only code that reads and writes notifications in Redis (through the scripts in lua/)."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

from django.conf import settings
from django.utils.translation import gettext
from redis.exceptions import ConnectionError as RedisConnectionError

from config import idempotency
from config.errors import Unavailable
from config.redis import Batch, LuaScript, get_redis
from directory import cache as directory
from directory import confirmed_writes
from subscriptions import keys as subscription_keys
from subscriptions.store import token_count

from . import keys
from .domain import (
    IfNoneMatch,
    InboxItem,
    InboxPage,
    Lifecycle,
    MarkReadResult,
    Notification,
    NotModified,
    Severity,
    UnreadSummary,
    ViewVersion,
)

# replicated: with REDIS_WAIT_REPLICAS set, publishing waits for replicas (see config/redis.py).
# guarded: it takes an Idempotency-Key's binding and record as its last KEYS and ARGV
# (config/idempotency.py).
# version-checked: it confirms the directory its caller resolved the type and warehouse from
# (directory/confirmed_writes.py), its KEY and ARGV just before the Idempotency-Key's.
_publish = idempotency.guarded(
    confirmed_writes.guarded(
        LuaScript.beside(__file__, "publish", replicated=True, prelude="read_model")
    )
)
_inbox = LuaScript.beside(__file__, "inbox", prelude="read_model")
_expire = LuaScript.beside(__file__, "expire", prelude="read_model")
_prune_read_marks = LuaScript.beside(__file__, "prune_read_marks")
# A live event as its stream users see it; the stream hub runs it on its asyncio client (its
# `source`), with the keys and arguments of event_read_state_call.
EVENT_READ_STATE = LuaScript.beside(__file__, "event_read_state", prelude="read_model")

# Cursors are now_ms * 1024 (+ a sequence within the millisecond): see lua/publish.lua.
CURSOR_PER_MS = 1024
DAY_MS = 86_400_000


def cursor_at(ms: int) -> int:
    """The smallest cursor a notification created at `ms` can have."""
    return int(ms) * CURSOR_PER_MS


class StaleSubscribers(Unavailable):
    """The subscriber set kept changing while publishing (retries exhausted): try again soon."""

    default_code = "subscribers_changing"


class NotMirrored(Exception):
    """Redis does not hold the pair's subscribers (no token, or a set that lost members):
    publishing must rebuild the pair from the database first, never deliver to nobody."""


class SubscribersUnavailable(RedisConnectionError):
    """The subscription mirror is missing and could not be rebuilt right now.

    A Redis ConnectionError on purpose: every caller already treats "Redis unavailable" as
    "retry later" (the API answers 503 with Retry-After; a rule run stops and retries its
    alerts on the next run), which is exactly what publishing to a lost mirror needs.
    """


class _SubscriberCache:
    """Per process: subscriber members of each (warehouse, type) with the token they belong to.

    The publish script checks the token atomically, so a stale entry costs one extra round trip
    and can never deliver to the wrong inboxes.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[int, int], tuple[str, tuple[str, ...], str]] = {}
        self._lock = threading.Lock()

    def entry(self, pair: tuple[int, int]) -> tuple[str, tuple[str, ...], str]:
        """Token, sorted members and their route class (keys.route_class), computed once."""
        with self._lock:
            return self._entries.get(pair, ("", (), ""))

    def put(self, pair: tuple[int, int], token: str, members: Sequence[str]) -> None:
        ordered = tuple(sorted(members))
        with self._lock:
            self._entries[pair] = (token, ordered, keys.route_class(ordered))


subscriber_cache = _SubscriberCache()


class Delivery(NamedTuple):
    """What deliver did: the cursor (0: nobody to deliver to) and the inboxes it reached, or,
    for a request made before with the same Idempotency-Key, what that one did (`replay`)."""

    cursor: int
    subscribers: tuple[str, ...]
    replay: idempotency.Replay | None = None


def deliver(
    notification: Notification,
    *,
    message_type_id: int,
    escalate_at_ms: int | None = None,
    attempts: int = 3,
    guard: idempotency.Guard | None = None,
    extra_inboxes: Sequence[str] = (),
) -> Delivery:
    """Fan out into every subscriber inbox (and `extra_inboxes`, subscriber ids such as
    "r:<id>" that receive it whether or not they subscribe). Cursor 0: nobody.

    The same call opens its lifecycle: flags (open, its severity), its escalation due time
    (`escalate_at_ms`, None: never) and its count in today's report. Raises NotMirrored when
    Redis has lost the pair's subscribers. With a `guard` (an Idempotency-Key), the record of
    the request is stored with the notification, and a request made before answers its
    Replay instead (its answer: `publish_answer`) and writes nothing.
    """
    warehouse_id = notification.warehouse
    pair = (warehouse_id, message_type_id)
    guard = guard or idempotency.Guard.none(keys.sequence(warehouse_id))
    guard_keys = guard.script_keys()  # on Redis Cluster, KeyReused before anything is written
    fixed_keys = [
        subscription_keys.subscribers(warehouse_id, message_type_id),
        subscription_keys.subscribers_token(warehouse_id, message_type_id),
        keys.sequence(warehouse_id),
        keys.contents(warehouse_id),
        keys.ids(warehouse_id),
        keys.routes(warehouse_id),
        keys.expiry(warehouse_id),
        keys.flags(warehouse_id),
        keys.escalations(warehouse_id),
        keys.report_counts(warehouse_id, report_day(notification.created_at_ms)),
        keys.classes(warehouse_id),
        keys.places(warehouse_id),
        keys.open_index(warehouse_id),
    ]
    for _ in range(attempts):
        check_key, held_version = confirmed_writes.check(keys.sequence(warehouse_id))
        token, subscribers, route_class = subscriber_cache.entry(pair)
        if not set(extra_inboxes) <= set(subscribers):
            subscribers = tuple(sorted({*subscribers, *extra_inboxes}))
            route_class = keys.route_class(subscribers)
        answer = publish_answer(notification, recipients=len(subscribers))
        reply = _publish(
            keys=[
                *fixed_keys,
                *keys.inboxes(warehouse_id, subscribers),
                check_key,
                *guard_keys,
            ],
            args=[
                token,
                notification.created_at_ms,
                notification.id,
                notification.to_json(),
                notification.expires_at_ms,
                Severity(notification.severity).level,
                "" if escalate_at_ms is None else escalate_at_ms,
                notification.message_type,
                report_retention_ms(),
                route_class,
                held_version,
                guard.arg(answer),
            ],
        )
        replay = guard.replayed(reply)
        if replay is not None:  # the first attempt's answer, whatever changed since
            directory.settle_unconfirmed(moved=False)
            return Delivery(int(replay.reply[1]), (), replay)
        status = int(reply[0])
        confirmed_writes.settle(status)  # DirectoryChanged when it moved on: nothing written
        if status == 1:
            return Delivery(int(reply[1]), subscribers)
        if status == -1:
            raise NotMirrored(f"Redis holds no subscribers of {pair}")
        token, members = _text(reply[1]), [_text(m) for m in reply[2:]]
        count = token_count(token)
        if count is not None and count != len(members):
            raise NotMirrored(f"The subscriber set of {pair} lost members")
        subscriber_cache.put(pair, token, members)
    raise StaleSubscribers(
        gettext(
            "The subscribers changed %(attempts)d times while publishing; please retry shortly."
        )
        % {"attempts": attempts}
    )


def idempotency_guard(
    *, warehouse_id: int, scope: str, key: str, operation: str, request: Any
) -> idempotency.Guard:
    """The Guard of a write in a warehouse made with an Idempotency-Key: its record in the
    warehouse's slot, and the key's binding, so the key reused in another warehouse is
    refused as well (`request` must name the warehouse: it is part of the fingerprint)."""
    return idempotency.Guard(
        record=keys.idempotency(warehouse_id, scope, key),
        fingerprint=idempotency.fingerprint(scope=scope, operation=operation, request=request),
        binding=keys.idempotency_binding(scope, key),
    )


def publish_answer(notification: Notification, *, recipients: int) -> str:
    """What a replay of the publish needs to answer as the first time did (one line)."""
    return json.dumps(
        {
            "id": notification.id,
            "created_at_ms": notification.created_at_ms,
            "recipients": recipients,
        }
    )


def visible_inboxes(warehouse_id: int, user_id: int, role_ids: Sequence[int]) -> list[str]:
    return keys.inboxes(warehouse_id, [f"u:{user_id}", *(f"r:{role_id}" for role_id in role_ids)])


def lifecycle_keys(warehouse_id: int) -> list[str]:
    """The per-warehouse keys of the alert lifecycle that the expiry sweep also cleans."""
    return [
        keys.flags(warehouse_id),
        keys.states(warehouse_id),
        keys.changes(warehouse_id),
        keys.history(warehouse_id),
        keys.escalations(warehouse_id),
    ]


def report_day(ms: int) -> int:
    """The UTC day (days since the epoch) the report counts an event at `ms` in."""
    return int(ms) // DAY_MS


def report_retention_ms() -> int:
    """How long report counts and durations are kept (one day more than the report can ask)."""
    return (int(settings.ALERT_REPORT_RETENTION_DAYS) + 1) * DAY_MS


def read_model_keys(warehouse_id: int) -> list[str]:
    """The per-warehouse keys of the read model (README "The read model"), in the order the
    scripts declare them after their own."""
    return [
        keys.classes(warehouse_id),
        keys.places(warehouse_id),
        keys.open_index(warehouse_id),
        keys.watermarks(warehouse_id),
        keys.markers(warehouse_id),
        keys.read_open(warehouse_id),
    ]


@functools.lru_cache(maxsize=4096)
def _warehouse_view_keys(prefix: str, warehouse_id: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """lua/inbox.lua's keys of one warehouse, before and after the user's read marks (made
    once per warehouse and key prefix: a poll builds none of them)."""
    del prefix  # part of the cache key only: the names below read it from the settings
    return (
        (keys.contents(warehouse_id), keys.expiry(warehouse_id)),
        (
            keys.ids(warehouse_id),
            keys.readers(warehouse_id),
            keys.flags(warehouse_id),
            keys.states(warehouse_id),
            keys.changes(warehouse_id),
            keys.sequence(warehouse_id),
            *read_model_keys(warehouse_id),
            keys.snoozes(warehouse_id),
            keys.snoozers(warehouse_id),
        ),
    )


def view_keys(warehouse_id: int, user_id: int, role_ids: Sequence[int]) -> list[str]:
    """KEYS of lua/inbox.lua for one user."""
    before, after = _warehouse_view_keys(settings.WMS_REDIS_PREFIX, warehouse_id)
    return [
        *before,
        keys.read_marks(warehouse_id, user_id),
        *after,
        *visible_inboxes(warehouse_id, user_id, role_ids),
    ]


_NO_CONDITION = ("", "", "")


def _view(
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    op: str,
    now_ms: int,
    op_args: Sequence[Any],
    if_none_match: IfNoneMatch | None = None,
) -> list:
    condition = (
        _NO_CONDITION
        if if_none_match is None
        else (if_none_match.before, if_none_match.after, " ".join(if_none_match.tags))
    )
    args = [op, now_ms, user_id, settings.NOTIFICATION_POLL_EXPIRED_SCAN, *condition, *op_args]
    # A poll answered from the directory's held version confirms it in this same round trip.
    [reply] = directory.read_confirmed(
        lambda batch: batch.script(
            _inbox, keys=view_keys(warehouse_id, user_id, role_ids), args=args
        )
    )
    return reply


def _not_modified(reply: list) -> NotModified | None:
    head = _head(reply)
    if _text(head["unread"]) != "not modified":
        return None
    return NotModified(_version(head))


# lua/inbox.lua's reply: these head values by name, then ITEM_WIDTH values per item.
INBOX_HEAD = (
    "unread",
    "next_since_or_marked",
    "info",
    "warning",
    "critical",
    "sequence",
    "next_expiry",
    "read_version",
    "has_more",
    "oldest",
)
_HEAD = len(INBOX_HEAD)
ITEM_WIDTH = 5


def _head(reply: list) -> dict[str, Any]:
    return dict(zip(INBOX_HEAD, reply[:_HEAD], strict=True))


def _version(head: dict[str, Any]) -> ViewVersion:
    return ViewVersion(
        _text(head["sequence"]), _text(head["next_expiry"]), _text(head["read_version"])
    )


def item_from_reply(
    cursor: Any, content: Any, read: bool, state: Any, snoozed_until: Any = None
) -> InboxItem:
    """An InboxItem from what the scripts return (state false/None: never changed;
    snoozed_until false/None: the user has not snoozed it)."""
    return InboxItem(
        Notification.from_json(content),
        int(cursor),
        read,
        Lifecycle.from_json(state) if state else None,
        int(float(snoozed_until)) if snoozed_until else None,
    )


class EventView(NamedTuple):
    """One notification event as lua/event_read_state.lua found it."""

    content: Any
    state: Any  # lifecycle JSON, None when never changed
    read_by: frozenset[int]  # the users (of those asked about) it is read for


def event_read_state_call(
    warehouse_id: int, notification_id: str, now_ms: int, user_ids: Sequence[int]
) -> tuple[list[str], list[Any]]:
    """The keys and arguments of EVENT_READ_STATE for these users."""
    keys_ = [
        keys.contents(warehouse_id),
        keys.ids(warehouse_id),
        keys.states(warehouse_id),
        keys.watermarks(warehouse_id),
        keys.places(warehouse_id),
        keys.snoozes(warehouse_id),
        *(keys.read_marks(warehouse_id, user) for user in user_ids),
    ]
    return keys_, [notification_id, now_ms, *user_ids]


def event_view(reply: list[Any], user_ids: Sequence[int]) -> EventView | None:
    """EVENT_READ_STATE's reply for `user_ids` (as passed); None when the notification is gone."""
    content, *rest = reply
    if content is None:
        return None
    state, *positions = rest
    return EventView(content, state or None, frozenset(user_ids[int(p) - 1] for p in positions))


def _items(flat: list) -> list[InboxItem]:
    items = []
    for i in range(0, len(flat), ITEM_WIDTH):
        cursor, content, read, state, snoozed = flat[i : i + ITEM_WIDTH]
        if content is None:  # removed by a sweep between index and content: nothing to show
            continue
        items.append(item_from_reply(cursor, content, bool(int(read)), state, snoozed))
    return items


def _by_severity(head: dict[str, Any]) -> dict[str, int]:
    return {severity: int(head[str(severity.value)]) for severity in Severity}


def list_inbox(
    *,
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    since: int,
    limit: int,
    include_read: bool,
    now_ms: int,
    with_oldest: bool = False,
    if_none_match: IfNoneMatch | None = None,
) -> InboxPage | NotModified:
    """A page after `since`; `with_oldest`: also the oldest slot the user's inboxes hold;
    NotModified when one of `if_none_match`'s ETags is still the page's."""
    op_args = [
        since,
        limit,
        "1" if include_read else "0",
        settings.NOTIFICATION_POLL_SCAN_BEYOND_PAGE,
        "1" if with_oldest else "0",
    ]
    reply = _view(warehouse_id, user_id, role_ids, "list", now_ms, op_args, if_none_match)
    unchanged = _not_modified(reply)
    if unchanged is not None:
        return unchanged
    head = _head(reply)
    oldest = _text(head["oldest"])
    return InboxPage(
        items=_items(reply[_HEAD:]),
        unread_count=int(head["unread"]),
        next_since=int(head["next_since_or_marked"]),
        version=_version(head),
        has_more=bool(int(head["has_more"])),
        oldest=int(oldest) if oldest else None,
    )


def latest_unread(
    *,
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    count: int,
    now_ms: int,
    if_none_match: IfNoneMatch | None = None,
) -> UnreadSummary | NotModified:
    """NotModified when one of `if_none_match`'s ETags is still the summary's."""
    reply = _view(warehouse_id, user_id, role_ids, "latest", now_ms, [count], if_none_match)
    unchanged = _not_modified(reply)
    if unchanged is not None:
        return unchanged
    head = _head(reply)
    return UnreadSummary(
        unread_count=int(head["unread"]),
        latest=_items(reply[_HEAD:]),
        by_severity=_by_severity(head),
        version=_version(head),
    )


def snoozed_items(
    *, warehouse_id: int, user_id: int, role_ids: Sequence[int], count: int, now_ms: int
) -> list[InboxItem]:
    """The user's snoozed notifications they still see, earliest wake first (at most `count`)."""
    reply = _view(warehouse_id, user_id, role_ids, "snoozed", now_ms, [count])
    return _items(reply[_HEAD:])


def mark_read(
    *,
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    ids: Sequence[str] | None,
    now_ms: int,
) -> MarkReadResult:
    """Mark the given notification ids read for the user, or all of them when ids is None."""
    which = ["all", settings.NOTIFICATION_MARK_ALL_ONE_BY_ONE] if ids is None else ["ids", *ids]
    head = _head(_view(warehouse_id, user_id, role_ids, "read", now_ms, which))
    return MarkReadResult(
        marked=int(head["next_since_or_marked"]), unread_count=int(head["unread"])
    )


# --- Expiry ---------------------------------------------------------------------------------------


def expired_batch(
    warehouse_id: int, *, now_ms: int, limit: int
) -> list[tuple[str, str, list[str], int]]:
    """Up to `limit` expired notifications, oldest expiry first: (cursor, id, subscribers, how
    many users marked it read one by one) each; the last is work finishing it costs."""
    client = get_redis()
    found: list[bytes] = client.zrangebyscore(  # type: ignore[assignment]
        keys.expiry(warehouse_id), "-inf", now_ms, start=0, num=limit
    )
    cursors = [_text(c) for c in found]
    if not cursors:
        return []
    fetch = Batch()
    fetch.command("HMGET", keys.routes(warehouse_id), *cursors)
    fetch.command("HMGET", keys.markers(warehouse_id), *cursors)
    routes, markers = fetch.execute()
    batch = []
    for cursor, route, readers in zip(cursors, routes, markers, strict=True):
        uuid, *subscribers = _text(route).split() if route else ("",)
        batch.append((cursor, uuid, subscribers, len(_text(readers).split()) if readers else 0))
    return batch


def remove_expired(
    warehouse_id: int, *, finished: Sequence[tuple[str, str]], removals: Sequence[tuple[str, str]]
) -> tuple[int, int]:
    """Remove inbox entries (subscriber, cursor) and then finished notifications (cursor, id)."""
    reply = _expire(
        keys=[
            keys.contents(warehouse_id),
            keys.ids(warehouse_id),
            keys.routes(warehouse_id),
            keys.expiry(warehouse_id),
            *lifecycle_keys(warehouse_id),
            *read_model_keys(warehouse_id),
            keys.snoozes(warehouse_id),
            keys.snoozers(warehouse_id),
            *keys.inboxes(warehouse_id, [subscriber for subscriber, _ in removals]),
        ],
        args=[
            len(finished),
            *(c for c, _ in finished),
            *(i for _, i in finished),
            *(cursor for _, cursor in removals),
        ],
    )
    return int(reply[0]), int(reply[1])


def expired_unswept(warehouse_id: int, *, now_ms: int) -> int:
    """How many notifications of the warehouse are past their expiry and not swept yet."""
    return expired_unswept_many([warehouse_id], now_ms=now_ms)[warehouse_id]


def expired_unswept_many(warehouse_ids: Sequence[int], *, now_ms: int) -> dict[int, int]:
    """expired_unswept of each warehouse, in one round trip (ZCOUNT: O(log n) each)."""
    if not warehouse_ids:
        return {}
    batch = Batch()
    for warehouse_id in warehouse_ids:
        batch.command("ZCOUNT", keys.expiry(warehouse_id), "-inf", now_ms)
    return {w: int(n) for w, n in zip(warehouse_ids, batch.execute(), strict=True)}


def scan_readers(warehouse_id: int, *, cursor: int, count: int) -> tuple[int, list[int]]:
    next_cursor, members = get_redis().sscan(keys.readers(warehouse_id), cursor=cursor, count=count)
    return int(next_cursor), [int(m) for m in members]


def prune_read_marks(
    warehouse_id: int, *, user_ids: Sequence[int], now_ms: int, most: int
) -> tuple[int, int]:
    """Drop expired read marks of these users, at most `most` marks in this call.

    Returns (marks removed, how many of the users, from the first, are done).
    """
    if not user_ids:
        return 0, 0
    removed, done = _prune_read_marks(
        keys=[keys.readers(warehouse_id), *(keys.read_marks(warehouse_id, u) for u in user_ids)],
        args=[now_ms, most, *user_ids],
    )
    return int(removed), int(done)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
