"""App config of the inventory demo app."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InventoryConfig(AppConfig):
    name = "inventory"
    verbose_name = _("Inventory (demo business tables)")
    url_prefix = "inventory/"  # the demo WMS's webhook (SPEC 14), config/urls.py
    # Its tables stand in for a WMS's business data: SQL rules may read them (every other
    # installed app's tables are denied to rules: rules/sql_policy.py).
    sql_rules_may_read = True

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule

        # `manage.py demo` turns pick waves on: they lower demo bin stock every so often.
        if settings.WMS_DEMO_PICK_WAVES:
            beat_schedule.register(
                "demo-pick-wave",
                task="inventory.tasks.demo_pick_wave",
                seconds=settings.WMS_DEMO_PICK_WAVE_SECONDS,
                expires=20.0,
            )
