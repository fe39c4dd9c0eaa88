"""Django app configuration of the chat."""

from django.apps import AppConfig


class MessagingConfig(AppConfig):
    name = "messaging"
    verbose_name = "Chat"
