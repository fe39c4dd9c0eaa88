"""Django app configuration of the chat."""

from django.apps import AppConfig


class MessagingConfig(AppConfig):
    name = "messaging"
    verbose_name = "Chat"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (a deleted user's chat data goes after commit)
