"""Push follows publishing and escalation (apps.py listens to notifications.hooks' Published and
Escalated): queue the push of an alert, never wait for it.

Only the inboxes are passed: which users stand behind a role, and which of them subscribed a
browser, is looked up by the task, off the publishing path.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings

from notifications.domain import Notification, Severity, Status
from notifications.hooks import Changed, ClaimExpired, Escalated, Published

from . import metrics
from .payload import Alert

logger = logging.getLogger(__name__)


def after_publish(published: Published) -> None:
    """A notification reached these inboxes: push it if it is severe enough
    (WEB_PUSH_MIN_SEVERITY, default critical)."""
    notification = published.notification
    threshold = Severity(settings.WEB_PUSH_MIN_SEVERITY).level
    if Severity(notification.severity).level < threshold:
        return
    _queue(_alert(notification, notification.severity, Status.OPEN), published.inboxes)


def after_escalation(escalated: Escalated) -> None:
    """An alert was escalated to these inboxes (the escalation role's): always pushed."""
    state = escalated.item.lifecycle
    _queue(_alert(escalated.item.notification, state.severity, state.status), escalated.inboxes)


def again(
    notification: Notification, *, severity: str, status: str, inboxes: Sequence[str]
) -> None:
    """A reminder of an alert nobody claimed (SPEC 14): pushed again to the users behind these
    inboxes (on shift, unless it is critical, as for every push)."""
    _queue(_alert(notification, severity, status), inboxes)


def after_claim_expired(expired: ClaimExpired) -> None:
    """A claim held too long was let go (SPEC 17): pushed again, open, to the users behind its
    inboxes (on shift, unless it is critical, as for every push)."""
    state = expired.item.lifecycle
    again(
        expired.item.notification,
        severity=state.severity,
        status=state.status,
        inboxes=expired.inboxes,
    )


def after_change(changed: Changed) -> None:
    """A claim or a resolve (SPEC 17) withdraws the alert from other members' devices: a push of
    it with the same tag (its id) that says who claimed it, or closes it when resolved. Only
    for alerts that were pushed (severe enough, or escalated); not to the one who acted."""
    item = changed.item
    if changed.step not in ("claim", "resolve") or item is None:
        return
    state = item.lifecycle
    threshold = Severity(settings.WEB_PUSH_MIN_SEVERITY).level
    if Severity(state.severity).level < threshold and state.escalated_at_ms is None:
        return
    claimed = state.status == Status.CLAIMED and state.claimed_by is not None
    alert = Alert(
        id=item.notification.id,
        warehouse=item.notification.warehouse,
        title=item.notification.title,
        body=item.notification.body,
        severity=str(state.severity),
        status=str(state.status),
        expires_at_ms=item.notification.expires_at_ms,
        claimed_by=state.claimed_by.username if claimed and state.claimed_by else None,
        close=state.status == Status.RESOLVED,
    )
    from .tasks import withdraw_alert

    try:
        withdraw_alert.apply_async(
            (alert.to_json(), None if changed.by is None else int(changed.by.id)), retry=False
        )
    except Exception as exc:  # the broker's errors vary: kombu, redis, OS
        metrics.QUEUE_ERRORS.inc()
        logger.warning("Could not queue the withdrawal of %s: %s", alert.id, exc)


def _alert(notification: Notification, severity: str, status: str) -> Alert:
    return Alert(
        id=notification.id,
        warehouse=notification.warehouse,
        title=notification.title,
        body=notification.body,
        severity=str(severity),
        status=str(status),
        expires_at_ms=notification.expires_at_ms,
    )


def _queue(alert: Alert, inboxes: Sequence[str]) -> None:
    if not inboxes:
        return
    from .tasks import push_alert

    try:
        # One attempt (no publish retries): a broker that is down costs the caller at most
        # its connect timeout, and the alert is in the inboxes either way.
        push_alert.apply_async((alert.to_json(), list(inboxes)), retry=False)
    except Exception as exc:  # the broker's errors vary: kombu, redis, OS
        metrics.QUEUE_ERRORS.inc()
        logger.warning("Could not queue the push of %s: %s", alert.id, exc)
