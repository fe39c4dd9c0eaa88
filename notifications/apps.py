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
