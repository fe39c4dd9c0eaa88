"""The publish script's reply, decoded in one place (readmodel.replies.publish_reply): one real
call of the script per kind of reply, each naming what the caller brought that was not current."""

from __future__ import annotations

import uuid

import pytest

from config import timestamps
from directory import cache as directory
from directory.keys import version_key
from notifications import keys, store
from notifications.domain import Notification, Severity
from notifications.readmodel.replies import PublishStatus
from subscriptions import keys as subscription_keys
from subscriptions.models import Subscription

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("cold_cache")]


@pytest.fixture
def subscribed(warehouse, rep_notice, role, make_user):
    """Rita through the Replenishment role, and Alice directly (mirrored at commit)."""
    make_user("rita", role)
    alice = make_user("alice")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    return {f"r:{role.pk}", f"u:{alice.pk}"}


@pytest.fixture
def one_call(warehouse, rep_notice):
    """One call of the publish script with a new notification (store.deliver)."""

    def call(**options) -> store.Delivery:
        now = timestamps.now_ms()
        notification = Notification(
            id=str(uuid.uuid4()),
            message_type=rep_notice.code,
            warehouse=warehouse.pk,
            title="Replenish A-01-03",
            body="",
            data={},
            created_at_ms=now,
            expires_at_ms=now + 60_000,
            severity=Severity.INFO,
        )
        return store.deliver(notification, message_type_id=rep_notice.pk, **options)

    return call


@pytest.fixture
def pair(warehouse, rep_notice) -> tuple[int, int]:
    return (warehouse.pk, rep_notice.pk)


def test_a_list_the_set_was_not_written_with_gets_the_members_back(
    redis, warehouse, one_call, subscribed
):
    reply = one_call().reply

    assert reply.status is PublishStatus.STALE_SUBSCRIBERS
    assert set(reply.members) == subscribed
    assert reply.token.startswith("2:")
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


def test_the_current_list_is_delivered(redis, warehouse, one_call, subscribed, pair):
    store.remember_subscribers(pair, one_call().reply)

    delivery = one_call()

    assert delivery.reply.status is PublishStatus.DELIVERED
    assert delivery.reply.cursor > 0
    assert set(delivery.inboxes) == subscribed
    assert redis.hlen(keys.contents(warehouse.pk)) == 1


def test_a_pair_without_its_token_is_not_mirrored(redis, warehouse, one_call, subscribed, pair):
    redis.delete(subscription_keys.subscribers_token(*pair))

    assert one_call().reply.status is PublishStatus.NOT_MIRRORED
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


def test_a_set_holding_fewer_members_than_its_token_says_lost_members(
    redis, warehouse, one_call, subscribed, pair
):
    redis.srem(subscription_keys.subscribers(*pair), sorted(subscribed)[0])

    reply = one_call().reply

    assert reply.status is PublishStatus.LOST_MEMBERS
    assert len(reply.members) == 1
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


@pytest.mark.single_redis  # on Redis Cluster the version is read first, never held
def test_a_held_directory_that_moved_on_is_directory_moved(
    redis, warehouse, one_call, subscribed, pair
):
    store.remember_subscribers(pair, one_call().reply)
    directory.checked()  # this process holds the version
    with directory.request_scope(), directory.holding():
        directory.checked()  # answered from what the process holds, unconfirmed
        redis.delete(version_key())

        reply = one_call().reply

    assert reply.status is PublishStatus.DIRECTORY_MOVED
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


def test_a_request_made_before_with_the_same_key_is_replayed(
    redis, warehouse, one_call, subscribed, pair
):
    store.remember_subscribers(pair, one_call().reply)
    guard = store.idempotency_guard(
        warehouse_id=warehouse.pk, scope="python", key="k-1", operation="publish", request={}
    )
    first = one_call(guard=guard).reply

    again = one_call(guard=guard).reply

    assert (first.status, again.status) == (PublishStatus.DELIVERED, PublishStatus.REPLAYED)
    assert again.cursor == first.cursor
    assert again.replay is not None
    assert redis.hlen(keys.contents(warehouse.pk)) == 1
