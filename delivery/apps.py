from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DeliveryConfig(AppConfig):
    name = "delivery"
    verbose_name = _("Delivery")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule
        from config.health import add_degraded_check

        from . import canary, health  # noqa: F401  (canary declares its holding on import)

        beat_schedule.register(
            "publish-canaries",
            task="delivery.tasks.publish_canaries",
            seconds=settings.CANARY_INTERVAL_SECONDS,
        )
        beat_schedule.register(
            "check-delivery",
            task="delivery.tasks.check_delivery",
            seconds=settings.DELIVERY_CHECK_SECONDS if settings.CANARY_INTERVAL_SECONDS else 0,
        )
        add_degraded_check("delivery", health.degraded)
