"""Deleting a warehouse or a user removes their notification data after commit (Celery tasks)."""

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from config.tasks import enqueue
from subscriptions.models import Warehouse

from . import tasks


@receiver(post_delete, sender=Warehouse)
def purge_deleted_warehouse(sender: type, instance: Warehouse, using: str, **kwargs: Any) -> None:
    warehouse_id = instance.pk
    transaction.on_commit(lambda: enqueue(tasks.purge_deleted_warehouse, warehouse_id), using=using)


@receiver(post_delete, sender=get_user_model())
def forget_deleted_user(sender: type, instance: Any, using: str, **kwargs: Any) -> None:
    user_id = instance.pk
    transaction.on_commit(lambda: enqueue(tasks.forget_deleted_user, user_id), using=using)
