"""Django app configuration of the chat."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MessagingConfig(AppConfig):
    name = "messaging"
    verbose_name = _("Chat")

    def ready(self) -> None:
        from django.conf import settings

        from config import beat_schedule, orphans

        from . import (
            cleanup,
            signals,  # noqa: F401  (a deleted user's chat data goes after commit)
        )

        orphans.add_sweep("Chats", cleanup.sweep_orphans)  # manage.py sweep_orphans runs it
        # Retention (old messages, idle chats) and the orphan sweep's backstop.
        for name, task in (
            ("purge-old-chat-messages", "purge_old_chat_messages"),
            ("drop-idle-chats", "drop_idle_chats"),
        ):
            beat_schedule.register(
                name,
                task=f"messaging.tasks.{task}",
                seconds=settings.CHAT_SWEEP_SECONDS,
                expires=False,
            )
        beat_schedule.register(
            "sweep-chat-orphans",
            task="messaging.tasks.sweep_chat_orphans",
            seconds=settings.ORPHAN_SWEEP_SECONDS,
        )
