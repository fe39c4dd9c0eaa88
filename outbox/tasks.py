"""Celery tasks of the outbox: one message's attempt (on its own queue, OUTBOX_QUEUE), and
beat's pass and purge (on the default queue; their entries: outbox/apps.py)."""

from __future__ import annotations

from celery import shared_task

from . import services
from .services import deliver_task as deliver

# `deliver` is declared in services.py, beside the code that queues it (a retry queues it
# again), under this module's name: so services and tasks import one way only.
__all__ = ["deliver", "pass_outbox", "purge_outbox"]


@shared_task(ignore_result=True)
def pass_outbox() -> dict[str, int]:
    """Beat: queue what is due, what a dead worker left, and outcomes not yet settled."""
    return services.pass_due()


@shared_task(ignore_result=True)
def purge_outbox() -> int:
    """Beat: delete the messages that ended more than OUTBOX_RETENTION_DAYS ago."""
    return services.purge_ended()
