"""Publishing inside a transaction (WMS code in `transaction.atomic()`, ATOMIC_REQUESTS sites):
it goes to the subscribers Redis holds as committed, whatever the transaction changed (SPEC 1)."""

import pytest
from django.db import transaction

from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.django_db(transaction=True)


class RolledBack(Exception):
    pass


def subscribe_and_roll_back(message_type, warehouse, user) -> None:
    with transaction.atomic():
        Subscription.objects.create(message_type=message_type, warehouse=warehouse, user=user)
        raise RolledBack


@pytest.fixture(params=["new message type", "new warehouse"])
def new_pair(request, warehouse, rep_notice):
    """A (warehouse, message type) pair nobody has subscribed to or published to yet, made by
    creating the type, or the warehouse, after the other."""
    if request.param == "new message type":
        return warehouse, MessageType.objects.create(code="QC_ALERT", name="QC")
    return Warehouse.objects.create(code="GZ03", name="Guangzhou 3"), rep_notice


def test_a_publish_in_the_transaction_that_subscribes_goes_to_the_committed_subscribers(
    new_pair, alice
):
    wh, message_type = new_pair

    with transaction.atomic():
        Subscription.objects.create(message_type=message_type, warehouse=wh, user=alice)
        inside = publish(message_type=message_type, warehouse=wh, title="inside")

    assert inside.recipients == 0  # alice's subscription was not committed yet
    after = publish(message_type=message_type, warehouse=wh, title="after the commit")
    assert after.subscribers == (f"u:{alice.pk}",)


def test_a_publish_in_a_transaction_after_a_rolled_back_subscribe(new_pair, alice):
    wh, message_type = new_pair

    with pytest.raises(RolledBack):
        subscribe_and_roll_back(message_type, wh, alice)

    with transaction.atomic():
        result = publish(message_type=message_type, warehouse=wh, title="after the rollback")

    assert result.recipients == 0


def test_a_rolled_back_subscribe_leaves_later_transactions_free_to_rebuild_a_lost_mirror(
    redis, warehouse, rep_notice, role, alice
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    with pytest.raises(RolledBack):
        subscribe_and_roll_back(rep_notice, warehouse, alice)
    redis.flushall()  # Redis restarted empty: the next publish rebuilds the mirror

    with transaction.atomic():  # an ATOMIC_REQUESTS request of the same worker thread
        result = publish(message_type=rep_notice, warehouse=warehouse, title="after the restart")

    assert result.subscribers == (f"r:{role.pk}",)
