from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = _("Notifications")

    def ready(self) -> None:
        from config import orphans
        from config.metrics import LIVE_COLLECTORS

        from . import (
            cleanup,
            signals,  # noqa: F401  (deleted warehouses' and users' data go after commit)
        )
        from .metrics import ExpiredUnswept

        LIVE_COLLECTORS.append(ExpiredUnswept())
        orphans.add_sweep("Notifications", cleanup.sweep_orphans)
