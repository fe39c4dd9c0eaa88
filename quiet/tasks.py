"""Celery tasks of the quiet floor: waking what ended silences held back."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(ignore_result=True)
def wake_ended_silences() -> int:
    """Beat (every SILENCE_CHECK_SECONDS)."""
    return services.wake_ended()


@shared_task(ignore_result=True)
def wake_silence(warehouse_id: int, silence_id: int) -> int:
    """A deleted silence: wake what it held back."""
    return services.wake(warehouse_id=warehouse_id, silence_id=silence_id)
