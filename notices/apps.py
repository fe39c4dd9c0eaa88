"""The notices app (SPEC 15): registers what the core asks of it."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NoticesConfig(AppConfig):
    name = "notices"
    verbose_name = _("Notices")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule
        from notifications import hooks

        from .services import NOTICE_TYPE

        # A notice is acknowledged on its own (SPEC 15): its notification offers no claim or
        # resolve.
        hooks.unclaimable_types.add(NOTICE_TYPE)
        # Reminders at the next shift start, escalation of past-due notices.
        beat_schedule.register(
            "notices-pass", task="notices.tasks.notices_pass", seconds=settings.NOTICE_PASS_SECONDS
        )
