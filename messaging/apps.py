"""Django app configuration of the chat."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MessagingConfig(AppConfig):
    name = "messaging"
    verbose_name = _("Chat")

    def ready(self) -> None:
        from config import orphans

        from . import (
            cleanup,
            signals,  # noqa: F401  (a deleted user's chat data goes after commit)
        )

        orphans.add_sweep("Chats", cleanup.sweep_orphans)  # manage.py sweep_orphans runs it
