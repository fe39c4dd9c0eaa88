"""Celery beat tasks of chat retention (autodiscovered by the Celery app)."""

import logging

from celery import shared_task

from . import services

logger = logging.getLogger(__name__)


@shared_task
def purge_old_chat_messages() -> dict[str, int]:
    """Remove chat messages older than CHAT_MESSAGE_RETENTION_DAYS."""
    report = services.messages_purge_old()
    if report.removed:
        logger.info("Chat retention: %s", report)
    return {"chats": report.chats, "removed": report.removed}


@shared_task
def drop_idle_chats() -> dict[str, int]:
    """Delete chats nobody has touched for CHAT_IDLE_DAYS."""
    dropped = services.chats_drop_idle()
    if dropped:
        logger.info("Chat retention: %d idle chats deleted", dropped)
    return {"dropped": dropped}
