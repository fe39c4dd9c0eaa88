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
            claims,
            cleanup,
            hooks,
            signals,  # noqa: F401  (deleted warehouses' and users' data go after commit)
        )
        from .metrics import ExpiredUnswept

        LIVE_COLLECTORS.append(ExpiredUnswept())
        hooks.listen(hooks.Changed, claims.after_change)
        beat_schedule.register(
            "expire-claims",
            task="notifications.tasks.expire_claims",
            seconds=settings.CLAIM_EXPIRY_SECONDS,
        )
        orphans.add_sweep("Notifications", cleanup.sweep_orphans)

        beat_schedule.register(
            "expire-notifications",
            task="notifications.tasks.expire_notifications",
            seconds=settings.NOTIFICATION_SWEEP_SECONDS,
            expires=False,
        )
        # Escalation, snooze wake-ups (SPEC 7, 13) and the orphan sweep: a tick queued while
        # no worker ran is dropped, the next one finds what is due. Entry "a-b" runs task a_b.
        for task, seconds in (
            ("escalate_notifications", settings.NOTIFICATION_ESCALATION_SECONDS),
            ("wake_snoozed_notifications", settings.NOTIFICATION_SNOOZE_WAKE_SECONDS),
            ("sweep_notification_orphans", settings.ORPHAN_SWEEP_SECONDS),
        ):
            name, task_name = task.replace("_", "-"), f"notifications.tasks.{task}"
            beat_schedule.register(name, task=task_name, seconds=seconds)
