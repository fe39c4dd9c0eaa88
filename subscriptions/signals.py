"""Every saved or deleted subscription (cascades included) is mirrored into Redis after commit,
and so are the (empty) sets of a new warehouse or message type.

The receivers only note which (warehouse, message type) sets changed; services rewrite them.
`QuerySet.update()` sends no signals: change subscriptions through models or services.
"""

from typing import Any

from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from .models import MessageType, Subscription, Warehouse
from .services import all_pairs, schedule_resync
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


@receiver(post_save, sender=Warehouse)
@receiver(post_save, sender=MessageType)
def mirror_new_pairs(
    sender: type, instance: Warehouse | MessageType, created: bool, using: str, **kwargs: Any
) -> None:
    # Mirrored from its commit on, a new pair is never "not mirrored" while a later transaction
    # subscribes to it: a publish in that transaction goes to what is committed (nobody yet)
    # instead of a rebuild that must skip the pair (its rows there are not committed).
    if not created:
        return
    if isinstance(instance, Warehouse):
        schedule_resync(all_pairs(warehouse_ids=[instance.pk]), using=using)
    else:
        schedule_resync(all_pairs(message_type_ids=[instance.pk]), using=using)
