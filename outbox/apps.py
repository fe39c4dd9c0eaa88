from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OutboxConfig(AppConfig):
    name = "outbox"
    verbose_name = _("Outbox")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule
        from config.metrics import LIVE_COLLECTORS

        from .metrics import Waiting

        LIVE_COLLECTORS.append(Waiting())
        beat_schedule.register(
            "pass-outbox", task="outbox.tasks.pass_outbox", seconds=settings.OUTBOX_PASS_SECONDS
        )
        beat_schedule.register(
            "purge-outbox", task="outbox.tasks.purge_outbox", seconds=settings.OUTBOX_PURGE_SECONDS
        )
