"""A deleted user's chat data is removed after the deletion commits (a Celery task)."""

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from config.tasks import enqueue

from . import tasks


@receiver(post_delete, sender=get_user_model())
def forget_chats_of_deleted_user(sender: type, instance: Any, using: str, **kwargs: Any) -> None:
    user_id = instance.pk
    transaction.on_commit(lambda: enqueue(tasks.forget_deleted_user, user_id), using=using)
