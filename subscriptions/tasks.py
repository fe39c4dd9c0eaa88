"""Celery tasks of the subscription mirror."""

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from . import services

logger = logging.getLogger(__name__)


@shared_task
def reconcile_subscriptions() -> dict[str, int]:
    """Repair Redis sets that differ from the database (an emptied Redis comes back here)."""
    report = services.reconcile()
    if report.repaired:
        logger.info("Reconciled subscriptions: %s", report)
    return {"sets": report.sets, "repaired": report.repaired}


@worker_ready.connect
def sync_when_worker_starts(**kwargs: Any) -> None:
    # A restarted Redis may be empty: rebuild at once instead of waiting for the first beat.
    reconcile_subscriptions.delay()
