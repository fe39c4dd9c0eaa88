"""Celery tasks of SPEC 14: beat's pass over due reminders and unclaimed e-mails."""

from __future__ import annotations

from celery import shared_task

from . import followups


@shared_task(ignore_result=True)
def send_reminders() -> dict[str, int]:
    """Beat (every ALERT_REMINDER_SECONDS): due reminders and e-mails, bounded per warehouse."""
    return followups.pass_all()
