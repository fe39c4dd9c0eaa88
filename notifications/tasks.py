"""Celery tasks of notifications (autodiscovered by the Celery app)."""

import logging

from celery import shared_task

from . import services

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


# The rules task lives in notifications.rules; importing it here lets autodiscovery find it.
from notifications.rules.tasks import run_due_rules  # noqa: E402, F401
