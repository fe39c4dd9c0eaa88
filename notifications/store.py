"""The only code that reads and writes notifications in Redis (through the scripts in lua/)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

from django.conf import settings
from redis.exceptions import ConnectionError as RedisConnectionError

from config import idempotency
from config.errors import Unavailable
from config.redis import Batch, get_redis
from directory import confirmed_writes
from subscriptions import keys as subscription_keys

from . import keys
from .domain import Notification, Severity
from .readmodel import CURSOR_PER_MS, cursor_at, delivery, route_class
from .readmodel.changes import report_retention_ms
from .readmodel.delivery import EventView, event_read_state_call, event_view, remove_expired
from .readmodel.layout import report_day
from .readmodel.replies import PublishReply, PublishStatus
from .readmodel.scripts import EVENT_READ_STATE
from .readmodel.views import (
    latest_unread,
    list_inbox,
    mark_read,
    snoozed_items,
    visible_inboxes,
)

# The read model's calls live in notifications/readmodel/; these names stay importable here.
__all__ = [
    "CURSOR_PER_MS",
    "EVENT_READ_STATE",
    "EventView",
    "PublishReply",
    "PublishStatus",
    "cursor_at",
    "event_read_state_call",
    "event_view",
    "latest_unread",
    "list_inbox",
    "mark_read",
    "remove_expired",
    "report_day",
    "report_retention_ms",
    "snoozed_items",
    "visible_inboxes",
]


class StaleSubscribers(Unavailable):
    """The subscriber set kept changing while publishing (its budget spent): try again soon."""

    default_code = "subscribers_changing"


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
        """Token, sorted members and their route class (readmodel.route_class), computed once."""
        with self._lock:
            return self._entries.get(pair, ("", (), route_class(())))

    def put(self, pair: tuple[int, int], token: str, members: Sequence[str]) -> None:
        ordered = tuple(sorted(members))
        with self._lock:
            self._entries[pair] = (token, ordered, route_class(ordered))


subscriber_cache = _SubscriberCache()


class Delivery(NamedTuple):
    """One call of the publish script: its reply, and the inboxes it was sent to (those it
    reached when the reply is DELIVERED)."""

    reply: PublishReply
    inboxes: tuple[str, ...]


def deliver(
    notification: Notification,
    *,
    message_type_id: int,
    escalate_at_ms: int | None = None,
    guard: idempotency.Guard | None = None,
    extra_inboxes: Sequence[str] = (),
    silence_id: int | None = None,
) -> Delivery:
    """One try at fanning out into every subscriber inbox this process knows of (and
    `extra_inboxes`, subscriber ids such as "r:<id>" that receive it whether or not they
    subscribe); the script writes only if that list, the mirror and the request's directory
    are current, and its reply says which was not (notifications/publishing.py retries).

    The same call opens its lifecycle: flags (open, its severity), its escalation due time
    (`escalate_at_ms`, None: never) and its count in today's report. With a `guard` (an
    Idempotency-Key), the record of the request is stored with the notification, and a
    request made before answers its Replay instead (its answer: `publish_answer`) and writes
    nothing. `silence_id`: the planned silence that holds it back (SPEC 17).
    """
    warehouse_id = notification.warehouse
    pair = (warehouse_id, message_type_id)
    guard = guard or idempotency.Guard.none(keys.sequence(warehouse_id))
    token, subscribers, route = subscriber_cache.entry(pair)
    if extra_inboxes and not set(extra_inboxes) <= set(subscribers):
        subscribers = tuple(sorted({*subscribers, *extra_inboxes}))
        route = route_class(subscribers)
    reply = delivery.publish(
        warehouse_id=warehouse_id,
        subscriber_keys=(
            subscription_keys.subscribers(warehouse_id, message_type_id),
            subscription_keys.subscribers_token(warehouse_id, message_type_id),
        ),
        subscribers=subscribers,
        token=token,
        now_ms=notification.created_at_ms,
        args=[
            notification.id,
            notification.to_json(),
            notification.expires_at_ms,
            Severity(notification.severity).level,
            "" if escalate_at_ms is None else escalate_at_ms,
            notification.message_type,
            report_retention_ms(),
            route,
            "" if silence_id is None else silence_id,
            notification.key or "",
            settings.FLAP_MAX,
            settings.FLAP_WINDOW_SECONDS * 1000,
        ],
        version=confirmed_writes.check(keys.sequence(warehouse_id)),
        guard=guard,
        answer=publish_answer(notification, recipients=len(subscribers)) if guard.active else "",
    )
    return Delivery(reply, subscribers)


def inboxes_of(warehouse_id: int, notification_id: str) -> tuple[str, ...]:
    """The inboxes a notification is in (its route), () when it is gone."""
    client = get_redis()
    slot = client.hget(keys.ids(warehouse_id), notification_id)
    route = client.hget(keys.routes(warehouse_id), slot) if slot is not None else None
    return tuple(_text(route).split()[1:]) if route else ()


def remember_subscribers(pair: tuple[int, int], reply: PublishReply) -> None:
    """Keep the subscriber set the script sent back (STALE_SUBSCRIBERS) for the next try."""
    subscriber_cache.put(pair, reply.token, reply.members)


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
    fetch.command("HMGET", keys.reads(warehouse_id), *cursors)
    routes, markers = fetch.execute()
    batch = []
    for cursor, route, readers in zip(cursors, routes, markers, strict=True):
        uuid, *subscribers = _text(route).split() if route else ("",)
        batch.append((cursor, uuid, subscribers, len(_text(readers).split()) if readers else 0))
    return batch


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


# --- Recent contents (the admin's checks) -------------------------------------------------------


def recent_contents(warehouse_ids: Sequence[int], *, per_warehouse: int) -> list[dict[str, Any]]:
    """The stored contents of up to `per_warehouse` notifications of each warehouse, those
    expiring last first (the newest, for a type's usual TTL), in two round trips: bounded
    reads whatever the warehouses hold. Swept ones are left out."""
    if not warehouse_ids or per_warehouse <= 0:
        return []
    ranges = Batch()
    for warehouse_id in warehouse_ids:
        ranges.command("ZREVRANGE", keys.expiry(warehouse_id), 0, per_warehouse - 1)
    slots = [[_text(slot) for slot in found] for found in ranges.execute()]
    contents = Batch()
    asked = [(w, found) for w, found in zip(warehouse_ids, slots, strict=True) if found]
    for warehouse_id, found in asked:
        contents.command("HMGET", keys.contents(warehouse_id), *found)
    return [
        json.loads(content)
        for reply in (contents.execute() if asked else [])
        for content in reply
        if content
    ]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
