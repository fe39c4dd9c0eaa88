"""A master of a replicated Redis Cluster dies: the API answers 503 (never 500) until the
failover is done, then recovers by itself; writes acknowledged by a replica (WAIT) survive.

These tests start their own 3 masters + 3 replicas (cluster-node-timeout 1 s), on both passes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group, Permission, User
from redis.cluster import RedisCluster
from rest_framework.test import APIClient

from config.redis import get_redis
from devredis.embedded_cluster import EmbeddedCluster, start_cluster
from notifications import keys as notification_keys
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse
from subscriptions.services import sync_all

pytestmark = pytest.mark.django_db(transaction=True)

RECOVERY_SECONDS = 20  # node timeout 1 s + election + our client reloading its slot map


@pytest.fixture(scope="module")
def replicated_cluster() -> Iterator[EmbeddedCluster]:
    cluster = start_cluster(masters=3, replicas=1, node_timeout_ms=1000)
    yield cluster
    cluster.stop()


@pytest.fixture
def on_replicated_cluster(settings, replicated_cluster) -> EmbeddedCluster:
    """The product's data on the replicated cluster for this test (broker and cache unchanged)."""
    # A test that killed a master leaves a master without a replica: start afresh.
    whole = all(node.running for node in replicated_cluster.nodes)
    if not whole or not replicated_cluster.is_ok() or len(replicated_cluster.masters()) < 3:
        replicated_cluster.restart()
    settings.REDIS_CLUSTER = True
    settings.REDIS_CLUSTER_NODES = [
        ("127.0.0.1", node.port) for node in replicated_cluster.nodes if node.running
    ]
    settings.REDIS_CLUSTER_OPTIONS = {}
    get_redis().flushdb(target_nodes=RedisCluster.PRIMARIES)
    return replicated_cluster


@pytest.fixture
def operator(db) -> tuple[Warehouse, User]:
    """An operator whose role receives REP_NOTICE in SH01, mirrored into the cluster."""
    warehouse = Warehouse.objects.create(code="SH01", name="Shanghai 1")
    message_type = MessageType.objects.create(code="REP_NOTICE", name="Replenish")
    role = Group.objects.create(name="Replenishment")
    user = User.objects.create_user("rita", password="pw")
    user.groups.add(role)
    Subscription.objects.create(message_type=message_type, warehouse=warehouse, role=role)
    return warehouse, user


def test_killing_a_master_gives_503s_then_recovers_without_losing_acknowledged_writes(
    on_replicated_cluster, operator, settings
):
    warehouse, user = operator
    sync_all()
    settings.REDIS_WAIT_REPLICAS = 1  # publishing returns once a replica has the notification
    sent = publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    client = APIClient()
    client.force_authenticate(user)
    bob = User.objects.create_user("bob", password="pw")
    chat = client.post("/api/v1/chats/", {"members": [bob.pk], "message": "hi"}, format="json")
    assert chat.status_code == 201

    def poll() -> list[int]:
        answers = [
            client.get("/api/v1/notifications/", {"warehouse": warehouse.pk}),
            client.get("/api/v1/chats/"),  # a Batch call
        ]
        for answer in answers:
            if answer.status_code == 503:
                assert answer["Retry-After"]
        return [answer.status_code for answer in answers]

    assert poll() == [200, 200]
    on_replicated_cluster.master_of(notification_keys.contents(warehouse.pk)).kill()

    seen: list[int] = []
    deadline = time.monotonic() + RECOVERY_SECONDS
    while time.monotonic() < deadline:
        statuses = poll()
        seen.extend(statuses)
        if statuses == [200, 200]:
            break
        time.sleep(0.1)  # a client's retry interval, not synchronisation
    assert set(seen) <= {200, 503}, seen
    assert 503 in seen  # the warehouse's master was gone for a while
    assert seen[-2:] == [200, 200], f"not recovered within {RECOVERY_SECONDS} s: {seen[-10:]}"
    items = client.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()["results"]
    assert [item["id"] for item in items] == [sent.id]


def test_publishing_answers_503_when_replicas_do_not_acknowledge_in_time_and_policy_refuses(
    on_replicated_cluster, operator, settings, make_user
):
    warehouse, _user = operator
    sync_all()
    settings.REDIS_WAIT_REPLICAS = 2  # each master has one replica: never enough
    settings.REDIS_WAIT_POLICY = "refuse"
    settings.REDIS_WAIT_TIMEOUT_MS = 100
    publisher = make_user("pete")
    publisher.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    client = APIClient()
    client.force_authenticate(publisher)
    started = time.monotonic()
    answer = client.post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "Replenish"},
        format="json",
    )
    assert answer.status_code == 503
    assert answer["Retry-After"]
    assert time.monotonic() - started < 5

    settings.REDIS_WAIT_REPLICAS = 1
    settings.REDIS_WAIT_TIMEOUT_MS = 5000  # a loaded test machine may take a while to replicate
    answer = client.post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "Replenish"},
        format="json",
    )
    assert answer.status_code == 201
