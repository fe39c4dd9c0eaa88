"""Rule alerts and the alert lifecycle: a reminder re-raises, a cleared condition resolves.

The runner calls these two helpers from `_deliver`: `raise_alert` instead of a bare publish,
and `resolve_cleared` once a run's keys are known. The rule's run lock keeps two runs of one
rule from interleaving here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from notifications import lifecycle
from notifications.domain import PublishResult
from notifications.services import publish

from . import store
from .base import Alert
from .domain import RuleInfo

logger = logging.getLogger(__name__)


def raise_alert(info: RuleInfo, alert: Alert) -> PublishResult:
    """Send an alert that is due: the same notification again (occurrences + 1, unread again
    for everyone) while the one raised for its key is still open or claimed, else a new one."""
    warehouse_id = alert.warehouse_id
    previous = store.alert_notification(info.id, warehouse_id, alert.key)
    if previous is not None:
        again = lifecycle.reraise(warehouse_id=warehouse_id, notification_id=previous)
        if again is not None and again.item is not None:
            return PublishResult(
                id=previous,
                recipients=again.inboxes,
                cursor=again.item.cursor,
                created_at_ms=again.item.notification.created_at_ms,
                reraised=True,
            )
    result = publish(
        message_type=info.message_type,
        warehouse=warehouse_id,
        title=alert.title,
        body=alert.body,
        data=alert.data,
        ttl_seconds=alert.ttl_seconds,
        severity=alert.severity,
        key=alert.key,
    )
    if result.recipients:
        store.remember_alert(info.id, warehouse_id, alert.key, result.id)
    return result


def withdraw(info: RuleInfo, alert: Alert, notification_id: str) -> None:
    """An alert's publish missed subscribers the database lists: resolve what it reached (by
    the system) and forget it, so the next run publishes it anew to everyone."""
    lifecycle.resolve_by_system(warehouse_id=alert.warehouse_id, notification_id=notification_id)
    store.forget_alerts(info.id, alert.warehouse_id, [alert.key])


def resolve_cleared(info: RuleInfo, keys_by_warehouse: Mapping[int, Sequence[str]]) -> int:
    """Resolve, by the system, the notifications of keys this run no longer yields (their
    condition cleared); returns how many were still open or claimed."""
    resolved = 0
    raised = store.alert_notifications(info.id, list(keys_by_warehouse))
    for warehouse_id, current in keys_by_warehouse.items():
        holding = set(current)
        cleared = {
            key: notification_id
            for key, notification_id in raised.get(warehouse_id, {}).items()
            if key not in holding
        }
        for notification_id in cleared.values():
            resolved += lifecycle.resolve_by_system(
                warehouse_id=warehouse_id, notification_id=notification_id
            )
        # Forgotten only once resolved: a run that fails half-way resolves the rest next time.
        store.forget_alerts(info.id, warehouse_id, list(cleared))
    if resolved:
        logger.info("Rule %s: %d cleared alerts resolved", info.name, resolved)
    return resolved
