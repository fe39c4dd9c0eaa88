"""App config of the event stream: an app so that its settings are its own (conf.py)."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class StreamConfig(AppConfig):
    name = "stream"
    verbose_name = _("Instant delivery")
