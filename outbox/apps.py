from django.apps import AppConfig


class OutboxConfig(AppConfig):
    name = "outbox"
    verbose_name = "Outbox"

    def ready(self) -> None:
        from config.metrics import LIVE_COLLECTORS

        from .metrics import Waiting

        LIVE_COLLECTORS.append(Waiting())
