from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SubscriptionsConfig(AppConfig):
    name = "subscriptions"
    verbose_name = _("Subscriptions")

    def ready(self) -> None:
        from config import health as config_health

        from . import (
            health,
            signals,  # noqa: F401  (connects the Redis mirror to model changes)
        )

        config_health.add_degraded_check("mirror", health.mirror)
