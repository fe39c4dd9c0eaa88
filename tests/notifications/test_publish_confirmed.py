"""A publish outside a request answers from the directory this process holds (message type,
warehouse) and has its script confirm the directory's version before it writes: one round
trip in steady state, and a change made by another process still counts at the next
publish (nothing is written from a directory Redis no longer holds)."""

from __future__ import annotations

import pytest

from config.redis import get_redis
from directory.keys import version_key
from notifications import keys
from notifications.services import PublishError, publish
from subscriptions.models import MessageType, Warehouse

pytestmark = pytest.mark.django_db(transaction=True)


def changed_elsewhere() -> None:
    """What another process's change does to this one: the version is gone from Redis, and
    this process has not read it since (its directory still holds the old one)."""
    get_redis().delete(version_key())


@pytest.mark.single_redis  # on Redis Cluster the version is read first, in a round trip of its own
def test_a_steady_publish_is_one_round_trip(replenishers, send, round_trips):
    send()  # fills the directory and the subscriber cache
    send()

    round_trips["n"] = 0
    assert send().recipients == 1
    assert round_trips["n"] == 1


def test_a_type_deactivated_elsewhere_is_refused_at_the_next_publish(
    redis, warehouse, rep_notice, replenishers, send
):
    send()
    MessageType.objects.filter(pk=rep_notice.pk).update(is_active=False)  # past the ORM's signals
    changed_elsewhere()

    with pytest.raises(PublishError, match="inactive"):
        send()
    assert redis.hlen(keys.contents(warehouse.pk)) == 1


def test_a_warehouse_deactivated_elsewhere_is_refused_at_the_next_publish(
    redis, warehouse, replenishers, send
):
    send()
    Warehouse.objects.filter(pk=warehouse.pk).update(is_active=False)
    changed_elsewhere()

    with pytest.raises(PublishError, match="Warehouse SH01 is inactive"):
        send()
    assert redis.hlen(keys.contents(warehouse.pk)) == 1


def test_a_refusal_from_the_held_directory_is_confirmed_before_it_is_raised(
    warehouse, replenishers, send
):
    """The process holds the warehouse as inactive; another process activated it since: the
    publish must go through, not be refused from what this process held."""
    warehouse.is_active = False
    warehouse.save()
    with pytest.raises(PublishError, match="inactive"):
        send()

    Warehouse.objects.filter(pk=warehouse.pk).update(is_active=True)
    changed_elsewhere()
    assert send().recipients == 1


def test_a_publish_after_a_change_elsewhere_is_delivered_once(redis, warehouse, replenishers, send):
    send()
    changed_elsewhere()

    result = send(title="after the change")
    assert result.recipients == 1
    assert redis.hlen(keys.contents(warehouse.pk)) == 2
    for subscriber in result.subscribers:
        assert redis.zcard(keys.inbox(warehouse.pk, subscriber)) == 2


def test_a_publish_within_a_request_uses_the_requests_version(warehouse, replenishers, send):
    """Inside a request's scope (the API's publish, a handover run) the version was read
    once already: the script is not asked to confirm it again, and the publish goes through."""
    from directory import cache as directory

    send()
    with directory.request_scope():
        directory.checked()  # the request has read the version
        changed_elsewhere()
        assert publish(message_type="REP_NOTICE", warehouse=warehouse.pk, title="x").recipients
