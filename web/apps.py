"""The warehouse UI: the page operators keep open all day, its login, and its static files."""

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    verbose_name = "Warehouse UI"

    def ready(self) -> None:
        from . import signals

        signals.connect()
