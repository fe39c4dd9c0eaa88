"""Writes: publishing notifications, marking them read, and sweeping expired ones."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from config import metrics, timestamps
from subscriptions import services as subscription_services
from subscriptions.models import MessageType, Warehouse

from . import store
from .domain import MarkReadResult, Notification, PublishResult, Severity, SweepReport
from .rules.base import ALERT_KEY_MAX_LENGTH
from .selectors import role_ids_of

logger = logging.getLogger(__name__)


class PublishError(ValueError):
    """A notification that cannot be published; `field` names the offending argument."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def resolve_message_type(message_type: MessageType | str) -> MessageType:
    code = message_type.code if isinstance(message_type, MessageType) else str(message_type)
    found = MessageType.objects.filter(code=code).first()
    if found is None:
        raise PublishError("message_type", f"Unknown message type {code!r}.")
    if not found.is_active:
        raise PublishError("message_type", f"Message type {code!r} is inactive.")
    return found


def resolve_warehouse(warehouse: Warehouse | int | str) -> Warehouse:
    """A warehouse from an instance, an id, or a code such as 'SH01'."""
    if isinstance(warehouse, Warehouse):
        found = Warehouse.objects.filter(pk=warehouse.pk).first()
    elif isinstance(warehouse, int) or str(warehouse).isdigit():
        found = Warehouse.objects.filter(pk=int(warehouse)).first()
    else:
        found = Warehouse.objects.filter(code=str(warehouse)).first()
    if found is None:
        raise PublishError("warehouse", f"Unknown warehouse {warehouse!r}.")
    if not found.is_active:
        raise PublishError("warehouse", f"Warehouse {found.code} is inactive.")
    return found


def _validated_content(
    title: str, body: str, data: Any, ttl_seconds: int | None, default_ttl: int
) -> tuple[str, str, dict[str, Any], int]:
    title = (title or "").strip()
    if not title:
        raise PublishError("title", "A title is required.")
    if len(title) > settings.NOTIFICATION_TITLE_MAX_LENGTH:
        raise PublishError(
            "title",
            f"The title is longer than {settings.NOTIFICATION_TITLE_MAX_LENGTH} characters.",
        )
    body = body or ""
    if len(body) > settings.NOTIFICATION_BODY_MAX_LENGTH:
        raise PublishError(
            "body", f"The body is longer than {settings.NOTIFICATION_BODY_MAX_LENGTH} characters."
        )
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise PublishError("data", "data must be a JSON object.")
    try:
        size = len(json.dumps(data, ensure_ascii=False).encode())
    except (TypeError, ValueError) as exc:
        raise PublishError("data", f"data is not JSON-serialisable: {exc}") from exc
    if size > settings.NOTIFICATION_DATA_MAX_BYTES:
        raise PublishError(
            "data",
            f"data is {size} bytes as JSON; the limit is {settings.NOTIFICATION_DATA_MAX_BYTES}.",
        )
    ttl = default_ttl if ttl_seconds is None else ttl_seconds
    if (
        not isinstance(ttl, int)
        or isinstance(ttl, bool)
        or not (1 <= ttl <= settings.NOTIFICATION_MAX_TTL_SECONDS)
    ):
        raise PublishError(
            "ttl_seconds",
            f"ttl_seconds must be a whole number from 1 to "
            f"{settings.NOTIFICATION_MAX_TTL_SECONDS}.",
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
) -> PublishResult:
    """Deliver a notification to every subscriber of (message type, warehouse), atomically.

    `severity` ("info", "warning", "critical") defaults to the type's `default_severity`;
    `key` names the alert's condition (rules pass theirs), shown to clients as `key`.
    Raises PublishError for an unknown or inactive type or warehouse, or invalid content.
    Zero subscribers is not an error: the result then has `recipients == 0`. When Redis has
    lost the subscription mirror (emptied, restarted empty, keys evicted) the warehouse's sets
    are rebuilt from the database first; if that cannot be done, SubscribersUnavailable (a
    Redis ConnectionError: the API answers 503) is raised and nothing is delivered.
    """
    message_type = resolve_message_type(message_type)
    warehouse = resolve_warehouse(warehouse)
    title, body, data, ttl = _validated_content(
        title, body, data, ttl_seconds, message_type.default_ttl_seconds
    )
    severity = _validated_severity(severity, message_type.default_severity)
    key = _validated_key(key)
    created = timestamps.now_ms()
    notification = Notification(
        id=str(uuid.uuid4()),
        message_type=message_type.code,
        warehouse=warehouse.pk,
        title=title,
        body=body,
        data=data,
        created_at_ms=created,
        expires_at_ms=created + ttl * 1000,
        severity=severity,
        key=key,
    )
    escalate_after = message_type.escalate_after_seconds
    cursor, subscribers = _deliver(
        notification,
        message_type_id=message_type.pk,
        escalate_at_ms=None if escalate_after is None else created + escalate_after * 1000,
    )
    metrics.PUBLISHES.labels(message_type.code).inc()
    metrics.DELIVERIES.inc(len(subscribers))
    return PublishResult(
        id=notification.id,
        recipients=len(subscribers),
        cursor=cursor,
        created_at_ms=created,
        subscribers=subscribers,
    )


def _deliver(
    notification: Notification, *, message_type_id: int, escalate_at_ms: int | None
) -> tuple[int, tuple[str, ...]]:
    """store.deliver, rebuilding the warehouse's subscriber sets once if Redis lost them."""
    try:
        return store.deliver(
            notification, message_type_id=message_type_id, escalate_at_ms=escalate_at_ms
        )
    except store.NotMirrored:
        subscription_services.rebuild_warehouse(notification.warehouse)
    try:
        return store.deliver(
            notification, message_type_id=message_type_id, escalate_at_ms=escalate_at_ms
        )
    except store.NotMirrored as exc:
        raise store.SubscribersUnavailable(
            "The subscriptions of this warehouse are being restored in Redis; retry shortly."
        ) from exc


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


def expire_warehouse(warehouse_id: int, *, at_ms: int | None = None) -> SweepReport:
    """Remove expired notifications, their inbox entries and read marks from one warehouse.

    Work goes in bounded calls (settings.NOTIFICATION_SWEEP_BATCH notifications fetched at a
    time, at most NOTIFICATION_SWEEP_OPS_PER_CALL removals per script call), so the sweep never
    blocks Redis for long however big the inboxes are.
    """
    at = timestamps.now_ms() if at_ms is None else at_ms
    ops = settings.NOTIFICATION_SWEEP_OPS_PER_CALL
    report = SweepReport()
    removals: list[tuple[str, str]] = []
    finished: list[tuple[str, str]] = []

    def flush() -> None:
        nonlocal report, removals, finished
        entries, done = store.remove_expired(warehouse_id, finished=finished, removals=removals)
        report += SweepReport(notifications=done, inbox_entries=entries, calls=1)
        removals, finished = [], []

    while batch := store.expired_batch(
        warehouse_id, now_ms=at, limit=settings.NOTIFICATION_SWEEP_BATCH
    ):
        for cursor, notification_id, subscribers in batch:
            for subscriber in subscribers:
                removals.append((subscriber, cursor))
                if len(removals) >= ops:
                    flush()
            # Only now are all of its inbox removals queued: it may be finished.
            finished.append((cursor, notification_id))
            if len(finished) >= ops:
                flush()
        if removals or finished:
            flush()

    scan_cursor = 0
    while True:
        scan_cursor, user_ids = store.scan_readers(
            warehouse_id, cursor=scan_cursor, count=settings.NOTIFICATION_SWEEP_BATCH
        )
        if user_ids:
            removed = store.prune_read_marks(warehouse_id, user_ids=user_ids, now_ms=at)
            report += SweepReport(read_marks=removed, calls=1)
        if scan_cursor == 0:
            break
    return report


def expire_all(*, at_ms: int | None = None) -> SweepReport:
    """The expiry sweep over every warehouse (what Celery beat runs)."""
    report = SweepReport()
    for warehouse_id in Warehouse.objects.values_list("id", flat=True):
        report += expire_warehouse(warehouse_id, at_ms=at_ms)
    return report
