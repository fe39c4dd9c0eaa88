from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SubscriptionsConfig(AppConfig):
    name = "subscriptions"
    verbose_name = _("Subscriptions")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule
        from config import health as config_health

        from . import (
            health,
            signals,  # noqa: F401  (connects the Redis mirror to model changes)
        )

        config_health.add_degraded_check("mirror", health.mirror)
        beat_schedule.register(
            "reconcile-subscriptions",
            task="subscriptions.tasks.reconcile_subscriptions",
            seconds=settings.SUBSCRIPTION_RECONCILE_SECONDS,
            expires=False,
        )
