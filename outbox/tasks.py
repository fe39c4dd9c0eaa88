"""Celery tasks of the outbox: one message's attempt (on its own queue, OUTBOX_QUEUE), and
beat's pass (on the default queue)."""

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
