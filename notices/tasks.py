"""Celery tasks of notices (SPEC 15): beat's pass (reminders, escalations)."""

from __future__ import annotations

from celery import shared_task

from . import followups


@shared_task(ignore_result=True)
def notices_pass() -> dict[str, int]:
    """Beat (every NOTICE_PASS_SECONDS): what failed to go out, reminders, escalations."""
    return followups.pass_all()
