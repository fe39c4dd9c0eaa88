from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuietConfig(AppConfig):
    name = "quiet"
    verbose_name = _("Quiet floor")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule
        from notifications import hooks

        from . import selectors

        hooks.silences = selectors.HeldSilences()
        beat_schedule.register(
            "wake-ended-silences",
            task="quiet.tasks.wake_ended_silences",
            seconds=settings.SILENCE_CHECK_SECONDS,
        )
