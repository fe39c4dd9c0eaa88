"""Celery tasks of chat retention and cleanup (autodiscovered by the Celery app)."""

import logging
from dataclasses import asdict

from celery import shared_task

from config import orphans

from . import cleanup, services

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


@shared_task
def forget_deleted_user(user_id: int) -> dict[str, int]:
    """A user was deleted: leave their chats and remove their chat list and contacts."""
    return orphans.forget_deleted_user(user_id, cleanup.user_forget, "Chat data")


@shared_task
def sweep_chat_orphans() -> dict[str, int]:
    """Chat data of deleted users, stray keys of gone chats, lost index entries (beat)."""
    report = cleanup.sweep_orphans()
    if report.changed:
        logger.info("Chat orphan sweep: %s", report)
    return asdict(report)
