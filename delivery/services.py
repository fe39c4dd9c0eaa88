"""Canaries and the alarm (SPEC 16): publish one per active warehouse, record their arrival
on the poll path, check every warehouse against the objective and e-mail on an episode."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from config import timestamps
from notifications import selectors as notification_selectors
from notifications import services as notifications
from notifications.services import PublishError
from outbox import services as outbox
from subscriptions.models import Warehouse

from . import canary, metrics, selectors, store
from .models import Episode
from .objective import Reading, Status

logger = logging.getLogger(__name__)

EMAIL = "email"  # the outbox's e-mail handler (registered by the actions app)


def _batches(ids: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def active_warehouse_ids() -> list[int]:
    return list(
        Warehouse.objects.filter(is_active=True).order_by("pk").values_list("pk", flat=True)
    )


def publish_canaries() -> dict[int, str]:
    """One canary to each active warehouse, CANARY_BATCH warehouses at a time; the token of
    each canary that went out, by warehouse id. A warehouse whose publish fails is logged and
    skipped (its status turns late or missing, which is what it is)."""
    inbox = f"u:{canary.user().pk}"
    published: dict[int, str] = {}
    for batch in _batches(active_warehouse_ids(), settings.CANARY_BATCH):
        for warehouse_id in batch:
            token = uuid.uuid4().hex
            try:
                store.start(warehouse_id, token)
                notifications.publish(
                    message_type=canary.CANARY,
                    warehouse=warehouse_id,
                    title="Canary",
                    data={"canary": token},
                    ttl_seconds=int(store.HOUR_MS / 1000),
                    extra_inboxes=[inbox],
                )
            except (PublishError, ConnectionError, OSError) as exc:
                logger.warning("Canary to warehouse %s not published: %r", warehouse_id, exc)
                continue
            published[warehouse_id] = token
    return published


def poll_canaries(expected: Mapping[int, str]) -> int:
    """Read each warehouse's canary inbox as a poll does (one read), and record the arrival of
    the canary expected there (the `poll` path) if the read sees it; how many were recorded.
    One arrival call per warehouse, whatever the inbox holds."""
    user = canary.user()
    recorded = 0
    for warehouse_id, token in expected.items():
        page = notification_selectors.inbox_page(
            user=user, warehouse_id=int(warehouse_id), limit=settings.NOTIFICATION_PAGE_MAX
        )
        seen = {(item.notification.data or {}).get("canary") for item in page.items}
        if token in seen:
            took = store.arrive(int(warehouse_id), token, store.Path.POLL)
            if took is not None:
                metrics.DELIVERY_SECONDS.labels(str(warehouse_id), store.Path.POLL).observe(
                    took / 1000
                )
                recorded += 1
    return recorded


def check() -> dict[str, Any]:
    """Every active warehouse against the objective: the result kept for /healthz, and each
    episode of late or missing delivery alarmed once (after DELIVERY_ALARM_AFTER_SECONDS)
    and once more on recovery. Returns what /healthz reads."""
    readings = selectors.readings()
    late = sorted(w.code for w, r in readings if r.status == Status.LATE)
    missing = sorted(w.code for w, r in readings if r.status == Status.MISSING)
    found = {"at": timestamps.now_ms(), "late": late, "missing": missing}
    store.save_check(found, ttl_seconds=24 * 3600)
    open_episodes = set(
        Episode.objects.filter(ended_at__isnull=True).values_list("warehouse_id", flat=True)
    )
    for warehouse, reading in readings:  # a transaction only where an episode starts or goes on
        if reading.status != Status.OK or warehouse.pk in open_episodes:
            _episode(warehouse, reading)
    return found


def _episode(warehouse: Warehouse, reading: Reading) -> None:
    now = timestamps.now()
    with transaction.atomic():
        episode = (
            Episode.objects.select_for_update()
            .filter(warehouse=warehouse, ended_at__isnull=True)
            .first()
        )
        if reading.status == Status.OK:
            if episode is not None:
                episode.ended_at = now
                episode.save(update_fields=["ended_at"])
                if episode.alarmed_at is not None:
                    _email(warehouse, reading, recovered=True)
            return
        if episode is None:
            episode = Episode.objects.create(
                warehouse=warehouse, status=reading.status, started_at=now
            )
        due = episode.started_at + timedelta(seconds=settings.DELIVERY_ALARM_AFTER_SECONDS)
        if episode.alarmed_at is None and now >= due:
            episode.alarmed_at = now
            episode.status = reading.status
            episode.save(update_fields=["alarmed_at", "status"])
            _email(warehouse, reading, recovered=False)


def _email(warehouse: Warehouse, reading: Reading, *, recovered: bool) -> None:
    """The alarm (or the recovery) through the outbox, in the site's language."""
    recipients = list(settings.DELIVERY_ALARM_EMAILS)
    if not recipients:
        return
    with translation.override(settings.LANGUAGE_CODE):
        if recovered:
            subject = _("Delivery in %(code)s is back within the objective") % {
                "code": warehouse.code
            }
            body = _("Canaries of warehouse %(code)s arrive within %(seconds)s s again.") % {
                "code": warehouse.code,
                "seconds": settings.DELIVERY_OBJECTIVE_SECONDS,
            }
        else:
            subject = _("Delivery in %(code)s is %(status)s") % {
                "code": warehouse.code,
                "status": _describe(reading.status),
            }
            body = _alarm_body(warehouse, reading)
    outbox.enqueue(kind=EMAIL, payload={"to": recipients, "subject": subject, "body": body})


def _describe(status: Status) -> str:
    if status == Status.LATE:
        return pgettext("delivery status", "late")
    return pgettext("delivery status", "missing")


def _alarm_body(warehouse: Warehouse, reading: Reading) -> str:
    if reading.status == Status.MISSING:
        return _(
            "No canary was published to warehouse %(code)s for three intervals: Celery beat "
            "is probably not running, so rules, escalations and sweeps are not running either."
        ) % {"code": warehouse.code}
    return _(
        "The last canary of warehouse %(code)s took longer than %(seconds)s s or has not "
        "arrived (stream: %(stream)s, poll: %(poll)s). Operators may see alerts late: check "
        "the stream processes, the Celery workers and Redis."
    ) % {
        "code": warehouse.code,
        "seconds": settings.DELIVERY_OBJECTIVE_SECONDS,
        "stream": _seconds(reading.stream_seconds(), served=reading.stream_served),
        "poll": _seconds(reading.poll_seconds(), served=True),
    }


def _seconds(value: float | None, *, served: bool) -> str:
    if not served:
        return _("no stream process")
    return _("not arrived") if value is None else f"{value:.2f} s"
