from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OutboxConfig(AppConfig):
    name = "outbox"
    verbose_name = _("Outbox")

    def ready(self) -> None:
        from config.metrics import LIVE_COLLECTORS

        from .metrics import Waiting

        LIVE_COLLECTORS.append(Waiting())
