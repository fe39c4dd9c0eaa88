"""The warehouse UI: the page operators keep open all day, its login, and its static files."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebConfig(AppConfig):
    name = "web"
    verbose_name = _("Warehouse UI")
    url_prefix = ""  # the page at `/`, its manifest, service worker, login (config/urls.py)

    def ready(self) -> None:
        from . import signals

        signals.connect()
