"""Every saved or deleted subscription (cascades included) is mirrored into Redis after commit.

The receivers only note which (warehouse, message type) sets changed; services rewrite them.
`QuerySet.update()` sends no signals: change subscriptions through models or services.
"""

from typing import Any

from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from .models import Subscription
from .services import schedule_resync
from .store import Pair


@receiver(pre_save, sender=Subscription)
def remember_previous_pair(sender: type, instance: Subscription, **kwargs: Any) -> None:
    # A subscription moved to another warehouse or type must also leave its old set.
    instance._previous_pair = None
    if instance.pk:
        old = (
            Subscription.objects.filter(pk=instance.pk)
            .values_list("warehouse_id", "message_type_id")
            .first()
        )
        instance._previous_pair = Pair(*old) if old else None


@receiver(post_save, sender=Subscription)
def mirror_saved(sender: type, instance: Subscription, using: str, **kwargs: Any) -> None:
    pairs = {Pair(instance.warehouse_id, instance.message_type_id)}
    previous = instance._previous_pair
    if previous:
        pairs.add(previous)
    schedule_resync(pairs, using=using)


@receiver(post_delete, sender=Subscription)
def mirror_deleted(sender: type, instance: Subscription, using: str, **kwargs: Any) -> None:
    schedule_resync({Pair(instance.warehouse_id, instance.message_type_id)}, using=using)
