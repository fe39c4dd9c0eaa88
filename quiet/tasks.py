"""Celery tasks of the quiet floor: waking what ended silences held back."""

from __future__ import annotations

from celery import shared_task

from . import services
from .services import wake_silence

__all__ = ["wake_ended_silences", "wake_silence"]


@shared_task(ignore_result=True)
def wake_ended_silences() -> int:
    """Beat (every SILENCE_CHECK_SECONDS)."""
    return services.wake_ended()
