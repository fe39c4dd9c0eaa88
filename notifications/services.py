"""Writes: publishing notifications, marking them read, and sweeping expired ones."""

from __future__ import annotations

import functools
import json
import logging
import uuid
from collections.abc import Sequence
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext as _

from config import idempotency, jsonvalues, metrics, timestamps
from config.errors import Invalid
from directory import cache as directory
from directory import confirmed_writes
from subscriptions.models import MessageType, Warehouse

from . import hooks, publishing, store
from .domain import (
    ALERT_KEY_MAX_LENGTH,
    ExpirySweepReport,
    MarkReadResult,
    Notification,
    PublishResult,
    Severity,
)
from .selectors import role_ids_of

logger = logging.getLogger(__name__)


class PublishError(Invalid, ValueError):
    """A notification that cannot be published; `field` names the offending argument."""

    def __init__(self, field: str, message: str, *, code: str | None = None) -> None:
        super().__init__(message, field=field, code=code)


class PublishedType(NamedTuple):
    """What a publish reads of its message type (from the directory, no instance made)."""

    pk: int
    code: str
    is_active: bool
    default_ttl_seconds: int
    default_severity: str
    escalate_after_seconds: int | None


class PublishedWarehouse(NamedTuple):
    """What a publish reads of its warehouse."""

    pk: int
    code: str
    is_active: bool


# The directory's attribute names of those fields, in their order (a row's `pk` is its "id").
_TYPE_FIELDS = ("id", *PublishedType._fields[1:])
_WAREHOUSE_FIELDS = ("id", *PublishedWarehouse._fields[1:])


def resolve_message_type(message_type: MessageType | str) -> PublishedType:
    """The message type, from the directory's per-process cache (exact: every change of a
    message type drops it; no database query per publish in steady state)."""
    code = message_type.code if isinstance(message_type, MessageType) else str(message_type)
    values = directory.message_type_values(code, _TYPE_FIELDS)
    if values is None:
        raise PublishError(
            "message_type", _("Unknown message type %(code)s.") % {"code": repr(code)}
        )
    found = PublishedType(*values)
    if not found.is_active:
        raise PublishError(
            "message_type", _("Message type %(code)s is inactive.") % {"code": repr(code)}
        )
    return found


def resolve_warehouse(warehouse: Warehouse | int | str) -> PublishedWarehouse:
    """A warehouse from an instance, an id, or a code such as 'SH01' (from the directory)."""
    values: tuple[Any, ...] | None
    if isinstance(warehouse, Warehouse):
        values = directory.warehouse_values(_WAREHOUSE_FIELDS, warehouse_id=warehouse.pk)
    elif isinstance(warehouse, int) or str(warehouse).isdigit():
        number = int(warehouse)
        values = (
            directory.warehouse_values(_WAREHOUSE_FIELDS, warehouse_id=number)
            if 0 < number < 2**63
            else None
        )
    else:
        values = directory.warehouse_values(_WAREHOUSE_FIELDS, code=str(warehouse))
    if values is None:
        raise PublishError(
            "warehouse", _("Unknown warehouse %(warehouse)s.") % {"warehouse": repr(warehouse)}
        )
    found = PublishedWarehouse(*values)
    if not found.is_active:
        raise PublishError("warehouse", _("Warehouse %(code)s is inactive.") % {"code": found.code})
    return found


def _validated_content(
    title: str, body: str, data: Any, ttl_seconds: int | None, default_ttl: int
) -> tuple[str, str, dict[str, Any], int]:
    title = (title or "").strip()
    title_limit = settings.NOTIFICATION_TITLE_MAX_LENGTH
    if not title:
        raise PublishError("title", _("A title is required."))
    if len(title) > title_limit:
        raise PublishError(
            "title",
            _("The title is longer than %(limit)d characters.") % {"limit": title_limit},
        )
    body = body or ""
    body_limit = settings.NOTIFICATION_BODY_MAX_LENGTH
    if len(body) > body_limit:
        raise PublishError(
            "body", _("The body is longer than %(limit)d characters.") % {"limit": body_limit}
        )
    for field, text in (("title", title), ("body", body)):
        try:
            jsonvalues.check(text, text=True)
        except jsonvalues.JsonValueError as exc:
            raise PublishError(field, str(exc)) from None
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise PublishError("data", _("data must be a JSON object."))
    try:
        # What is stored must be served again: no NaN or Infinity (which json.dumps would
        # write and every later poll would fail to render), no lone surrogates, no deep nests.
        jsonvalues.check(data, text=True)
        size = len(json.dumps(data, ensure_ascii=False, allow_nan=False).encode())
    except jsonvalues.JsonValueError as exc:
        raise PublishError("data", str(exc)) from exc
    except (TypeError, ValueError) as exc:
        raise PublishError(
            "data", _("data is not JSON-serialisable: %(reason)s") % {"reason": exc}
        ) from exc
    data_limit = settings.NOTIFICATION_DATA_MAX_BYTES
    if size > data_limit:
        raise PublishError(
            "data",
            _("data is %(size)d bytes as JSON; the limit is %(limit)d.")
            % {"size": size, "limit": data_limit},
        )
    ttl = default_ttl if ttl_seconds is None else ttl_seconds
    ttl_limit = settings.NOTIFICATION_MAX_TTL_SECONDS
    if not isinstance(ttl, int) or isinstance(ttl, bool) or not (1 <= ttl <= ttl_limit):
        raise PublishError(
            "ttl_seconds",
            _("ttl_seconds must be a whole number from 1 to %(limit)d.") % {"limit": ttl_limit},
        )
    return title, body, data, ttl


def _validated_severity(severity: Severity | str | None, default: str) -> Severity:
    value = default if severity is None else severity
    try:
        return Severity(value)
    except ValueError as exc:
        choices = ", ".join(Severity)
        raise PublishError("severity", f"severity must be one of {choices}.") from exc


def _validated_key(key: str | None) -> str | None:
    if key is None or key == "":
        return None
    if not isinstance(key, str):
        raise PublishError("key", "key must be a string.")
    if len(key) > ALERT_KEY_MAX_LENGTH:
        raise PublishError("key", f"key is longer than {ALERT_KEY_MAX_LENGTH} characters.")
    return key


def publish(
    *,
    message_type: MessageType | str,
    warehouse: Warehouse | int | str,
    title: str,
    body: str = "",
    data: dict[str, Any] | None = None,
    ttl_seconds: int | None = None,
    severity: Severity | str | None = None,
    key: str | None = None,
    idempotency_key: str | None = None,
    idempotency_scope: str = "python",
    extra_inboxes: Sequence[str] = (),
) -> PublishResult:
    """Deliver a notification to every subscriber of (message type, warehouse), atomically.

    `idempotency_key` (1-255 printable characters; SPEC 11): a retry of the same publish with
    the same key within IDEMPOTENCY_TTL_SECONDS returns the first one's result (`replayed`
    True) and delivers nothing again; the same key with other arguments raises KeyReused.
    Keys are separate per `idempotency_scope` (the API passes the user's; Python callers
    share "python"). A publish that raised (Redis unavailable, a timeout) either stored
    nothing or its retry with the same key finds what it stored.

    `severity` ("info", "warning", "critical") defaults to the type's `default_severity`;
    `key` names the alert's condition (rules pass theirs), shown to clients as `key`.
    Raises PublishError for an unknown or inactive type or warehouse, or invalid content.
    `extra_inboxes` (subscriber ids, "u:<id>" / "r:<id>") receive it too, whether or not they
    subscribe (a shift handover reaches its role this way, SPEC 13).
    Zero subscribers is not an error: the result then has `recipients == 0`. When Redis has
    lost the subscription mirror (emptied, restarted empty, keys evicted) the warehouse's sets
    are rebuilt from the database first; if that cannot be done, SubscribersUnavailable (a
    Redis ConnectionError: the API answers 503) is raised and nothing is delivered.

    Outside a request the type and warehouse come from the directory this process holds, and
    the script confirms it (one round trip in steady state); what the script finds out of
    date is retried by one loop with one budget (notifications/publishing.py).
    """

    prepare = functools.partial(
        _publication,
        message_type=message_type,
        warehouse=warehouse,
        title=title,
        body=body,
        data=data,
        ttl_seconds=ttl_seconds,
        severity=severity,
        key=key,
        idempotency_key=idempotency_key,
        idempotency_scope=idempotency_scope,
        extra_inboxes=tuple(extra_inboxes),
    )
    # Within the write's scope to the end: the listeners read the same confirmed directory.
    with confirmed_writes.writing() as write:
        publication, delivery = publishing.deliver(write, prepare)
        return _published(publication, delivery)


def _publication(
    *,
    message_type: MessageType | str,
    warehouse: Warehouse | int | str,
    title: str,
    body: str,
    data: dict[str, Any] | None,
    ttl_seconds: int | None,
    severity: Severity | str | None,
    key: str | None,
    idempotency_key: str | None,
    idempotency_scope: str,
    extra_inboxes: tuple[str, ...],
) -> publishing.Publication:
    """publish()'s arguments resolved (from the directory as the publish holds it), checked
    and made into the notification; PublishError when they cannot be."""
    kind = resolve_message_type(message_type)
    place = resolve_warehouse(warehouse)
    title, body, data, ttl = _validated_content(
        title, body, data, ttl_seconds, kind.default_ttl_seconds
    )
    severity = _validated_severity(severity, kind.default_severity)
    key = _validated_key(key)
    idempotency_key = idempotency.clean_key(idempotency_key)
    guard = None
    if idempotency_key is not None:
        request = {
            "message_type": kind.code,
            "warehouse": place.pk,
            "title": title,
            "body": body,
            "data": data,
            "ttl_seconds": ttl,
            "severity": str(severity),
            "key": key,
        }
        guard = store.idempotency_guard(
            warehouse_id=place.pk,
            scope=idempotency_scope,
            key=idempotency_key,
            operation="publish",
            request=request,
        )
    created = timestamps.now_ms()
    notification = Notification(
        id=str(uuid.uuid4()),
        message_type=kind.code,
        warehouse=place.pk,
        title=title,
        body=body,
        data=data,
        created_at_ms=created,
        expires_at_ms=created + ttl * 1000,
        severity=severity,
        key=key,
    )
    escalate_after = kind.escalate_after_seconds
    return publishing.Publication(
        notification,
        message_type_id=kind.pk,
        escalate_at_ms=None if escalate_after is None else created + escalate_after * 1000,
        guard=guard,
        extra_inboxes=extra_inboxes,
        silence_id=hooks.silences.covering(
            warehouse_id=place.pk,
            type_code=kind.code,
            severity=str(severity),
            at_ms=created,
        ),
    )


def _published(publication: publishing.Publication, delivery: store.Delivery) -> PublishResult:
    """The result of a publish the script stored (or had stored, for a replay), counted and
    announced to the features that follow publishes up."""
    notification, reply = publication.notification, delivery.reply
    folded = reply.folded
    replayed = reply.replay is not None
    if replayed:
        metrics.IDEMPOTENT_REPLAYS.labels("publish").inc()
    # Its key flaps (or the first one flapped, for a replay): raised again quietly, nobody is
    # told (SPEC 17).
    if folded is not None:
        return PublishResult(
            id=folded.id,
            recipients=folded.inboxes,
            cursor=reply.cursor,
            created_at_ms=folded.created_at_ms,
            replayed=replayed,
            flapping=True,
        )
    if reply.replay is not None:
        first = json.loads(reply.replay.answer)
        return PublishResult(
            id=first["id"],
            recipients=first["recipients"],
            cursor=reply.cursor,
            created_at_ms=first["created_at_ms"],
            replayed=True,
        )
    subscribers = delivery.inboxes
    metrics.PUBLISHES.labels(notification.message_type).inc()
    metrics.DELIVERIES.inc(len(subscribers))
    if reply.cursor:  # stored (to subscribers, or due for escalation): features follow it up
        hooks.announce(hooks.Published(notification, subscribers))
    return PublishResult(
        id=notification.id,
        recipients=len(subscribers),
        cursor=reply.cursor,
        created_at_ms=notification.created_at_ms,
        subscribers=subscribers,
    )


def mark_read(
    *, user: AbstractBaseUser, warehouse_id: int, ids: Sequence[str] | None
) -> MarkReadResult:
    """Mark notifications read for this user only; `ids=None` marks all. Idempotent.

    Ids the user cannot see are ignored.
    """
    return store.mark_read(
        warehouse_id=warehouse_id,
        user_id=user.pk,
        role_ids=role_ids_of(user),
        ids=ids,
        now_ms=timestamps.now_ms(),
    )


# --- Expiry sweep -------------------------------------------------------------------------------


def expire_warehouse(warehouse_id: int, *, at_ms: int | None = None) -> ExpirySweepReport:
    """Remove expired notifications, their inbox entries and read marks from one warehouse.

    Work goes in bounded calls (settings.NOTIFICATION_SWEEP_BATCH notifications fetched at a
    time, at most NOTIFICATION_SWEEP_OPS_PER_CALL removals per script call), so the sweep never
    blocks Redis for long however big the inboxes are.
    """
    at = timestamps.now_ms() if at_ms is None else at_ms
    ops = settings.NOTIFICATION_SWEEP_OPS_PER_CALL
    report = ExpirySweepReport()
    removals: list[tuple[str, str]] = []
    finished: list[tuple[str, str]] = []
    finishing = 0  # work of the finished ones: one each, plus one per user with state of it

    def flush() -> None:
        nonlocal report, removals, finished, finishing
        entries, done, reads = store.remove_expired(
            warehouse_id, finished=finished, removals=removals, now_ms=at
        )
        report += ExpirySweepReport(
            notifications=done, inbox_entries=entries, read_marks=reads, calls=1
        )
        removals, finished, finishing = [], [], 0

    while batch := store.expired_batch(
        warehouse_id, now_ms=at, limit=settings.NOTIFICATION_SWEEP_BATCH
    ):
        for cursor, notification_id, subscribers, markers in batch:
            for subscriber in subscribers:
                removals.append((subscriber, cursor))
                if len(removals) + finishing >= ops:
                    flush()
            # Only now are all of its inbox removals queued: it may be finished.
            finished.append((cursor, notification_id))
            finishing += 1 + markers
            if len(removals) + finishing >= ops:
                flush()
        if removals or finished:
            flush()

    return report


def expire_all(*, at_ms: int | None = None) -> ExpirySweepReport:
    """The expiry sweep over every warehouse (what Celery beat runs)."""
    report = ExpirySweepReport()
    for warehouse_id in Warehouse.objects.values_list("id", flat=True):
        report += expire_warehouse(warehouse_id, at_ms=at_ms)
    return report
