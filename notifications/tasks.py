"""Celery tasks of notifications (autodiscovered by the Celery app)."""

import logging
from dataclasses import asdict

from celery import shared_task

from config import orphans

from . import claims, cleanup, lifecycle, services

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
def purge_deleted_warehouse(warehouse_id: int) -> dict[str, int]:
    """A warehouse was deleted: remove every Redis key of it (queued after commit)."""
    report = cleanup.warehouse_purge(warehouse_id)
    logger.info("Deleted warehouse %d: %s", warehouse_id, report)
    return asdict(report)


@shared_task
def forget_deleted_user(user_id: int) -> dict[str, int]:
    """A user was deleted: remove their inboxes, read marks and readers entries."""
    return orphans.forget_deleted_user(user_id, cleanup.user_forget, "Notification data")


@shared_task
def sweep_notification_orphans() -> dict[str, int]:
    """What deleted warehouses, users, roles, message types and rules left behind in the
    warehouses' keys (beat)."""
    report = cleanup.sweep_orphans()
    if report.keys:
        logger.info("Notification orphan sweep: %s", report)
    return asdict(report)


@shared_task
def escalate_notifications() -> int:
    """Escalate open notifications whose time has come (Celery beat, every 15 s by default)."""
    escalated = lifecycle.escalate_all()
    if escalated:
        logger.info("Escalated %d notifications", escalated)
    return escalated


@shared_task
def expire_claims() -> int:
    """Let go of claims held too long with no progress (Celery beat, SPEC 17), in batches."""
    expired = claims.expire_all()
    if expired:
        logger.info("Let go of %d expired claims", expired)
    return expired


@shared_task
def wake_snoozed_notifications() -> int:
    """Wake snoozes whose time has come (Celery beat, every 15 s by default), in batches."""
    woken = lifecycle.wake_due_all()
    if woken:
        logger.info("Woke %d snoozed notifications", woken)
    return woken
