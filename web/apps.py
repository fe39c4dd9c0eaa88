"""The warehouse UI: the page operators keep open all day, its login, and its static files."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebConfig(AppConfig):
    name = "web"
    verbose_name = _("Warehouse UI")

    def ready(self) -> None:
        from . import signals

        signals.connect()
