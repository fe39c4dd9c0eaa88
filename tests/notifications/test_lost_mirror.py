"""Redis lost the subscription mirror (emptied, restarted empty, keys evicted): publishing
rebuilds it from the database first, or fails where the caller sees it, never delivers to nobody."""

import pytest

from notifications import keys, store
from subscriptions import keys as subscription_keys
from subscriptions import services as subscription_services
from subscriptions.models import MessageType, Subscription
from tests.notifications.conftest import seen_by

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("cache", ["warm", "cold"])
def test_publish_after_redis_was_emptied_reaches_every_subscriber(
    request, redis, warehouse, subscribed, send, cache
):
    send()  # warms this process's cache
    if cache == "cold":
        request.getfixturevalue("cold_cache")
    redis.flushall()

    result = send(title="Replenish A-01-04")

    assert result.recipients == 2
    for user in subscribed:
        assert seen_by(user, warehouse) == [result.id]


@pytest.mark.parametrize("lost", ["token", "set"], ids=["token evicted alone", "set evicted alone"])
def test_a_single_evicted_key_is_noticed(
    redis, warehouse, rep_notice, subscribed, send, cold_cache, lost
):
    pair = (warehouse.pk, rep_notice.pk)
    victim = {
        "token": subscription_keys.subscribers_token(*pair),
        "set": subscription_keys.subscribers(*pair),
    }[lost]
    assert redis.delete(victim) == 1

    result = send()

    assert result.recipients == 2
    for user in subscribed:
        assert seen_by(user, warehouse) == [result.id]


def test_the_rebuild_happens_once_then_publishing_is_one_round_trip_again(
    redis, warehouse, subscribed, send, cold_cache, rebuilds
):
    redis.flushall()

    results = [send(title=f"n{i}") for i in range(5)]

    assert [r.recipients for r in results] == [2] * 5
    assert rebuilds == [warehouse.pk]


def test_the_rebuild_restores_every_type_of_the_warehouse(
    redis, warehouse, rep_notice, role, subscribed, send, cold_cache, rebuilds
):
    qc = MessageType.objects.create(code="QC_ALERT", name="QC")
    Subscription.objects.create(message_type=qc, warehouse=warehouse, role=role)
    redis.flushall()

    send()
    qc_result = send(message_type=qc)

    assert qc_result.subscribers == (f"r:{role.pk}",)
    assert rebuilds == [warehouse.pk]


def test_a_type_nobody_subscribed_is_marked_and_delivers_to_nobody(
    redis, warehouse, rep_notice, send, cold_cache, rebuilds
):
    redis.flushall()
    first, second = send(), send()

    assert (first.recipients, second.recipients) == (0, 0)
    assert rebuilds == [warehouse.pk]  # once: the empty set is now marked as mirrored
    token = redis.get(subscription_keys.subscribers_token(warehouse.pk, rep_notice.pk))
    assert token.decode().startswith("0:")


def test_a_mirror_that_cannot_be_rebuilt_fails_with_503_and_delivers_nothing(
    monkeypatch, redis, client_for, warehouse, subscribed, publisher, cold_cache
):
    monkeypatch.setattr(subscription_services, "rebuild_warehouse", lambda warehouse_id, **_: None)
    redis.flushall()

    response = client_for(publisher).post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "Replenish"},
        format="json",
    )

    assert response.status_code == 503
    assert response["Retry-After"].isdigit()
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


def test_the_error_is_a_redis_connection_error_callers_already_retry(
    monkeypatch, redis, subscribed, send, cold_cache
):
    from config.redis import REDIS_UNAVAILABLE

    monkeypatch.setattr(subscription_services, "rebuild_warehouse", lambda warehouse_id, **_: None)
    redis.flushall()

    with pytest.raises(store.SubscribersUnavailable) as caught:
        send()

    assert isinstance(caught.value, REDIS_UNAVAILABLE)
