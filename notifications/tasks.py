"""Celery tasks of notifications (autodiscovered by the Celery app)."""

import logging

from celery import shared_task

from . import lifecycle, services

logger = logging.getLogger(__name__)


@shared_task
def expire_notifications() -> dict[str, int]:
    """The expiry sweep over every warehouse, in bounded batches (Celery beat, every minute)."""
    report = services.expire_all()
    if report.notifications or report.read_marks:
        logger.info("Expiry sweep: %s", report)
    return {
        "notifications": report.notifications,
        "inbox_entries": report.inbox_entries,
        "read_marks": report.read_marks,
    }


@shared_task
def escalate_notifications() -> int:
    """Escalate open notifications whose time has come (Celery beat, every 15 s by default)."""
    escalated = lifecycle.escalate_all()
    if escalated:
        logger.info("Escalated %d notifications", escalated)
    return escalated


# The rules task lives in notifications.rules; importing it here lets autodiscovery find it.
from notifications.rules.tasks import run_due_rules  # noqa: E402, F401
