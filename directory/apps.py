from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DirectoryConfig(AppConfig):
    name = "directory"
    verbose_name = _("Directory")

    def ready(self) -> None:
        from . import signals

        signals.connect()
