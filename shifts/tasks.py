"""Celery tasks of shifts (autodiscovered by the Celery app)."""

import logging

from celery import shared_task

from . import handovers

logger = logging.getLogger(__name__)


@shared_task
def hand_over_shifts() -> int:
    """Make the handovers of shifts that ended (Celery beat, every SHIFT_HANDOVER_SECONDS)."""
    made = handovers.hand_over_due()
    if made:
        logger.info("Made %d shift handovers", made)
    return made
