"""Celery tasks of the outbox: one message's attempt (on its own queue, OUTBOX_QUEUE), and
beat's pass and purge (on the default queue; their entries: outbox/apps.py)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from . import services


@shared_task(ignore_result=True, queue=settings.OUTBOX_QUEUE)
def deliver(message_id: str) -> str:
    """One attempt at an outbox message."""
    return services.deliver(message_id)


@shared_task(ignore_result=True)
def pass_outbox() -> dict[str, int]:
    """Beat: queue what is due, what a dead worker left, and outcomes not yet settled."""
    return services.pass_due()


@shared_task(ignore_result=True)
def purge_outbox() -> int:
    """Beat: delete the messages that ended more than OUTBOX_RETENTION_DAYS ago."""
    return services.purge_ended()
