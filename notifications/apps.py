from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = _("Notifications")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule, orphans
        from config.metrics import LIVE_COLLECTORS

        from . import (
            cleanup,
            signals,  # noqa: F401  (deleted warehouses' and users' data go after commit)
        )
        from .metrics import ExpiredUnswept

        LIVE_COLLECTORS.append(ExpiredUnswept())
        orphans.add_sweep("Notifications", cleanup.sweep_orphans)

        beat_schedule.register(
            "expire-notifications",
            task="notifications.tasks.expire_notifications",
            seconds=settings.NOTIFICATION_SWEEP_SECONDS,
            expires=False,
        )
        # Escalation and snooze wake-ups (SPEC 7, 13): a tick queued while no worker ran is
        # dropped, the next one finds what is due.
        beat_schedule.register(
            "escalate-notifications",
            task="notifications.tasks.escalate_notifications",
            seconds=settings.NOTIFICATION_ESCALATION_SECONDS,
        )
        beat_schedule.register(
            "wake-snoozed-notifications",
            task="notifications.tasks.wake_snoozed_notifications",
            seconds=settings.NOTIFICATION_SNOOZE_WAKE_SECONDS,
        )
        # Which rules are due (each rule's own interval decides whether it runs).
        beat_schedule.register(
            "run-due-rules",
            task="notifications.rules.tasks.run_due_rules",
            seconds=settings.RULES_TICK_SECONDS,
        )
        beat_schedule.register(
            "sweep-notification-orphans",
            task="notifications.tasks.sweep_notification_orphans",
            seconds=settings.ORPHAN_SWEEP_SECONDS,
        )
