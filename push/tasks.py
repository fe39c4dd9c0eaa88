"""Celery tasks of Web Push: an alert's fan-out to browsers, and each browser's retries."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.conf import settings

from notifications.domain import Severity
from notifications.selectors import inboxes_of

from . import metrics, selectors, services
from .http import PushSession
from .models import PushSubscription
from .payload import Alert

logger = logging.getLogger(__name__)

# Pushes wait on the browsers' push services: on a queue of their own, so a slow one never
# delays an escalation or a handover (config/queues.py finds it; `-Q push`).
PUSH_QUEUE = "push"


@shared_task(ignore_result=True, queue=PUSH_QUEUE)
def push_alert(alert: dict[str, Any], inboxes: list[str]) -> dict[str, int]:
    """Queued after an alert reached these inboxes: post it to every push subscription, for
    its warehouse, of the users the inboxes stand for (role members resolved now). Each
    browser whose push service did not answer gets its own retries (`push_retry`).

    Users off shift in the alert's warehouse (SPEC 13) are not pushed, unless it is critical:
    their inbox has it all the same. Nor are those it came quietly to (SPEC 17 noise budget:
    a non-critical alert beyond their budget), decided by the read model as for their polls.
    The posts go out at once (at most WEB_PUSH_CONCURRENCY at
    a time), so one slow push service delays no other browser."""
    note = Alert.from_json(alert)
    counts: dict[str, int] = {}
    reached = selectors.subscriptions_reached(warehouse_id=note.warehouse, inboxes=inboxes)
    if note.severity != Severity.CRITICAL:
        on_shift = selectors.on_shift_only(reached, warehouse_id=note.warehouse)
        if len(on_shift) < len(reached):
            counts[services.Outcome.OFF_SHIFT] = len(reached) - len(on_shift)
            metrics.PUSHES.labels(services.Outcome.OFF_SHIFT).inc(len(reached) - len(on_shift))
        reached = on_shift
    # Told loudly (SPEC 17): only users the read model's one rule says to tell now (unread for
    # them, not silenced, not muted below its severity, not snoozed, not come quietly to them).
    told = selectors.told_loudly(reached, warehouse_id=note.warehouse, notification_id=note.id)
    if len(told) < len(reached):
        counts[services.Outcome.QUIET] = len(reached) - len(told)
        metrics.PUSHES.labels(services.Outcome.QUIET).inc(len(reached) - len(told))
    reached = told
    return _post_all(reached, note, alert, counts)


@shared_task(ignore_result=True, queue=PUSH_QUEUE)
def withdraw_alert(alert: dict[str, Any], acted_by: int | None) -> dict[str, int]:
    """Queued after a claim or a resolve (SPEC 17): post the withdrawal (`claimed_by`, or
    `close`) to every push subscription, for its warehouse, of the users who see the alert,
    except the one who acted, on shift or not (it replaces or closes what a device shows)."""
    note = Alert.from_json(alert)
    inboxes = inboxes_of(warehouse_id=note.warehouse, notification_id=note.id)
    reached = [
        s
        for s in selectors.subscriptions_reached(warehouse_id=note.warehouse, inboxes=inboxes)
        if s.user_id != acted_by
    ]
    return _post_all(reached, note, alert, {})


def _post_all(
    reached: list[PushSubscription], note: Alert, alert: dict[str, Any], counts: dict[str, int]
) -> dict[str, int]:
    """Post `note` to every subscription at once; a browser whose push service did not answer
    gets its own retries. Returns `counts` with each outcome added."""
    attempts = services.send_all(reached, note, session_factory=PushSession)
    for subscription, attempt in zip(reached, attempts, strict=True):
        if attempt.outcome == services.Outcome.RETRY:
            _retry_later(subscription.pk, alert, retry=1, retry_after=attempt.retry_after)
        counts[attempt.outcome] = counts.get(attempt.outcome, 0) + 1
    return counts


@shared_task(ignore_result=True, queue=PUSH_QUEUE)
def push_retry(subscription_id: int, alert: dict[str, Any], retry: int) -> str:
    """Retry number `retry` (from 1) of one browser's push."""
    subscription = PushSubscription.objects.filter(pk=subscription_id).first()
    if subscription is None:  # unsubscribed (or gone) meanwhile
        return "unsubscribed"
    attempt = services.send(subscription, Alert.from_json(alert), session=PushSession())
    if attempt.outcome == services.Outcome.RETRY:
        _retry_later(subscription_id, alert, retry=retry + 1, retry_after=attempt.retry_after)
    return attempt.outcome


def _retry_later(
    subscription_id: int, alert: dict[str, Any], *, retry: int, retry_after: float | None
) -> None:
    """Queue retry number `retry` after its back-off, or give up after WEB_PUSH_MAX_RETRIES."""
    if retry > settings.WEB_PUSH_MAX_RETRIES:
        metrics.PUSHES.labels(services.Outcome.FAILED).inc()
        logger.warning("Push to subscription %s failed %d times: given up", subscription_id, retry)
        return
    metrics.PUSHES.labels(services.Outcome.RETRY).inc()
    try:
        push_retry.apply_async(
            (subscription_id, alert, retry),
            countdown=services.backoff_seconds(retry - 1, retry_after),
        )
    except Exception as exc:  # the broker's errors vary: kombu, redis, OS
        metrics.QUEUE_ERRORS.inc()
        logger.warning("Could not queue retry %d of push to %s: %s", retry, subscription_id, exc)
