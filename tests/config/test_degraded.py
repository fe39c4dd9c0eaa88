"""Health that tells the truth, and a durability setting that does not become an outage
(issue row 4f): with REDIS_WAIT_REPLICAS=1 and a master without replicas (the suite's Redis
has none, as a master a failover left alone), publishing either goes on and /healthz says so
("degrade", the default) or answers 503 having stored nothing ("refuse"). /healthz also names
a lost stream subscription and a subscription mirror being rebuilt.
"""

from __future__ import annotations

import asyncio

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from config import status
from config.redis_async import async_redis
from devredis.embedded_redis import free_port
from stream.hub import Hub, Listener, Unavailable
from subscriptions.models import Subscription
from subscriptions.services import rebuilding
from tests.config.test_health import metric, scrape

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_flags_of_earlier_tests(queues_consumed):
    """No flag of an earlier test, and workers for every queue: what is degraded is the
    test's."""
    for name in list(status.degraded()):
        status.clear(name)
    yield
    for name in list(status.degraded()):
        status.clear(name)


@pytest.fixture
def publisher(make_user, client_for, warehouse, rep_notice, role):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    pete = make_user("pete", role)
    pete.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    return client_for(pete)


def post(api, warehouse, title: str = "Replenish A-01-03"):
    return api.post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": title},
        format="json",
    )


def titles(api, warehouse) -> list[str]:
    answer = api.get("/api/v1/notifications/", {"warehouse": warehouse.pk})
    assert answer.status_code == 200
    return [item["title"] for item in answer.json()["results"]]


def test_wait_that_cannot_be_met_degrades_and_alarms_instead_of_refusing(
    client: Client, publisher, warehouse, settings
):
    settings.REDIS_WAIT_REPLICAS = 1  # no replica will ever acknowledge
    settings.REDIS_WAIT_TIMEOUT_MS = 20
    before = scrape(client)
    answers = [post(publisher, warehouse, f"Replenish {i}") for i in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 201]
    assert titles(publisher, warehouse) == ["Replenish 0", "Replenish 1", "Replenish 2"]

    health = client.get("/healthz")
    assert health.status_code == 200  # requests are served: the balancer keeps the process
    body = health.json()
    assert body["status"] == "degraded"
    assert "REDIS_WAIT_REPLICAS=1 cannot be met" in body["degraded"]["replication"]
    accepted = 'wms_replication_shortfalls_total{outcome="accepted"}'
    # At least one per publish (a publish that first refreshes its cached subscribers waits
    # twice).
    assert metric(scrape(client), accepted) - metric(before, accepted) >= 3


def test_refuse_policy_answers_503_and_stores_nothing(
    client: Client, publisher, warehouse, settings
):
    settings.REDIS_WAIT_REPLICAS = 1
    settings.REDIS_WAIT_POLICY = "refuse"
    answer = post(publisher, warehouse)
    assert answer.status_code == 503
    assert answer["Retry-After"]
    assert titles(publisher, warehouse) == []  # "not stored": a retry cannot duplicate it
    body = client.get("/healthz").json()
    assert body["status"] == "degraded"
    assert "(refuse)" in body["degraded"]["replication"]


def test_healthz_names_a_stream_hub_without_subscription(client: Client, settings, alice):
    dead = free_port()  # nothing listens there: the subscription cannot be made

    class CutOffHub(Hub):
        client_factory = staticmethod(
            lambda **options: (
                async_redis(**options)
                if not options.get("pubsub")
                else async_redis(pubsub=True, node=("127.0.0.1", dead))
            )
        )

    async def try_to_stream() -> dict:
        hub = CutOffHub()
        listener = Listener(user_id=alice.pk, warehouse_id=1, role_ids=(), limit=10)
        with pytest.raises(Unavailable):
            await hub.register(listener, timeout=1)
        body = await asyncio.to_thread(lambda: client.get("/healthz").json())
        await hub.aclose()
        return body

    body = asyncio.run(try_to_stream())
    assert body["status"] == "degraded"
    assert body["degraded"]["subscription"].startswith("no live subscription")
    # Once the hub is closed (no stream wants a subscription) the flag goes with it.
    assert client.get("/healthz").json()["status"] == "ok"


def test_healthz_names_a_mirror_being_rebuilt(client: Client):
    with rebuilding("warehouse 7"):
        body = client.get("/healthz").json()
    assert body["status"] == "degraded"
    assert "warehouse 7" in body["degraded"]["mirror"]
    assert client.get("/healthz").json()["status"] == "ok"
