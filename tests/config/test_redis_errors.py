"""Every Redis error is a 503 with Retry-After and a JSON detail, never a 500 (SPEC section 10).

Each failure is reproduced on the real server: out of memory, a read-only replica, a busy
script, a script failing on data of the wrong type, a cluster node without slots.
"""

from __future__ import annotations

import logging
import subprocess

import pytest
import redis as redis_py
from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import RequestFactory
from django.urls import reverse
from redis.exceptions import (
    AskError,
    ClusterCrossSlotError,
    ClusterDownError,
    MasterDownError,
    MovedError,
    RedisClusterException,
    SlotNotCoveredError,
    TryAgainError,
)
from rest_framework.response import Response

from config.api import exception_handler
from config.middleware import RedisErrorMiddleware
from devredis.embedded_redis import free_port, redis_server_binary
from notifications import keys as notification_keys
from notifications import store as notification_store
from notifications.services import publish
from subscriptions.models import Subscription
from subscriptions.services import reconcile
from tests.waiting import eventually


def handled(error: Exception) -> Response:
    """The DRF exception handler's answer (it has one for every error tested here)."""
    response = exception_handler(error, {})
    assert response is not None, f"no answer for {error!r}"
    return response


# CONFIG SET and REPLICAOF reach one server: the cluster pass has its own failover tests.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.single_redis]


def assert_unavailable(response) -> None:
    assert response.status_code == 503, response.content
    assert response["Retry-After"] == str(settings.REDIS_RETRY_AFTER_SECONDS)
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"]


@pytest.fixture
def send_before_failover(warehouse, rep_notice, subscribed, redis):
    """One notification is waiting, then the server becomes a read-only replica."""
    publish(message_type=rep_notice, warehouse=warehouse, title="before the failover")
    redis.replicaof("127.0.0.1", free_port())
    yield
    redis.replicaof("NO", "ONE")


def publish_over_api(client_for, publisher, warehouse):
    return client_for(publisher).post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "Replenish"},
        format="json",
    )


def test_out_of_memory_publish_and_chat_are_503(
    client_for, publisher, alice, bob, warehouse, subscribed, redis, redis_out_of_memory
):
    published = publish_over_api(client_for, publisher, warehouse)
    chat = client_for(alice).post(
        "/api/v1/chats/", {"members": [bob.pk], "message": "hi"}, format="json"
    )
    direct = client_for(alice).post("/api/v1/chats/direct/", {"user": bob.pk}, format="json")

    assert_unavailable(published)
    assert_unavailable(chat)
    assert_unavailable(direct)
    assert redis.keys("wms:{wh:*}:notes") == []


def test_read_only_replica_after_a_failover_is_503(
    client_for, publisher, warehouse, subscribed, rep_notice, redis, send_before_failover
):
    published = publish_over_api(client_for, publisher, warehouse)
    marked = client_for(subscribed).post(
        "/api/v1/notifications/read/", {"warehouse": warehouse.pk, "all": True}, format="json"
    )

    assert_unavailable(published)
    assert_unavailable(marked)


def test_a_busy_script_is_503(client_for, alice, warehouse, subscribed, redis_busy):
    polled = client_for(subscribed).get("/api/v1/notifications/", {"warehouse": warehouse.pk})
    chats = client_for(alice).get("/api/v1/chats/")

    assert_unavailable(polled)
    assert_unavailable(chats)


def test_a_script_failing_on_a_key_of_the_wrong_type_is_503(
    client_for, publisher, warehouse, subscribed, redis, caplog
):
    redis.set(notification_keys.contents(warehouse.pk), "not a hash")

    with caplog.at_level(logging.ERROR, logger="config.api"):
        published = publish_over_api(client_for, publisher, warehouse)

    assert_unavailable(published)
    # Not the client's fault, but maybe ours: the log keeps the traceback.
    assert any("WRONGTYPE" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


def test_subscribers_that_keep_changing_are_503_not_500(
    client_for, publisher, warehouse, subscribed, monkeypatch, redis
):
    # The process never learns the set's token, as if it changed before every attempt.
    monkeypatch.setattr(notification_store.subscriber_cache, "put", lambda *args: None)

    response = publish_over_api(client_for, publisher, warehouse)

    assert_unavailable(response)
    assert redis.keys("wms:{wh:*}:notes") == []


def test_redis_errors_in_python_callers_are_redis_errors(
    warehouse, rep_notice, subscribed, redis_read_only
):
    # publish() itself does not translate: callers outside HTTP (rules) see the Redis error.
    with pytest.raises(redis_py.RedisError, match="READONLY"):
        publish(message_type=rep_notice, warehouse=warehouse, title="x")


def test_the_admin_saves_a_subscription_while_redis_is_out_of_memory(
    client, warehouse, rep_notice, role, redis, redis_config, caplog
):
    client.force_login(User.objects.create_superuser("boss", "boss@example.com", "pw"))
    redis_config("maxmemory-policy", "noeviction")
    redis_config("maxmemory", "1")

    with caplog.at_level(logging.WARNING, logger="subscriptions.services"):
        response = client.post(
            reverse("admin:subscriptions_subscription_add"),
            {"message_type": rep_notice.pk, "warehouse": warehouse.pk, "role": role.pk},
        )

    assert response.status_code == 302, response.content
    assert Subscription.objects.filter(role=role).count() == 1
    assert "left to reconcile" in caplog.text
    redis_config("maxmemory", "0")
    assert reconcile().repaired == 1  # the next reconcile brings the mirror up to date


def test_pages_outside_the_api_answer_503_on_a_redis_error(redis):
    redis.set("wms:test:string", "x")
    with pytest.raises(redis_py.ResponseError) as wrong_type:
        redis.hget("wms:test:string", "field")
    middleware = RedisErrorMiddleware(lambda request: HttpResponse())

    page = middleware.process_exception(
        RequestFactory().get("/", HTTP_ACCEPT="text/html"), wrong_type.value
    )
    api = middleware.process_exception(RequestFactory().get("/api/v1/x/"), wrong_type.value)
    other = middleware.process_exception(RequestFactory().get("/"), ValueError("not Redis"))

    assert page is not None
    assert api is not None
    assert page.status_code == 503
    assert page["Retry-After"].isdigit()
    assert b"unavailable" in page.content
    assert api.status_code == 503
    assert b'"detail"' in api.content
    assert other is None


@pytest.fixture
def cluster_node(tmp_path):
    """A real Redis in cluster mode that serves no hash slot (a cluster that is down)."""
    port = free_port()
    while port > 55000:  # its cluster bus listens on port + 10000
        port = free_port()
    process = subprocess.Popen(
        [
            redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(tmp_path),
            "--cluster-enabled",
            "yes",
            "--save",
            "",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis_py.Redis(port=port, socket_connect_timeout=1, socket_timeout=5)

    def answers() -> bool:
        try:
            return bool(client.ping())
        except redis_py.ConnectionError:
            return False

    try:
        assert eventually(answers, timeout=10)
        yield client
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)


def test_a_real_clusterdown_reply_is_503(cluster_node):
    with pytest.raises(ClusterDownError) as down:
        cluster_node.set("wms:{wh:1}:seq", 1)

    response = handled(down.value)

    assert response.status_code == 503
    assert response["Retry-After"] == str(settings.REDIS_RETRY_AFTER_SECONDS)


@pytest.mark.parametrize(
    "error",
    [
        MovedError("3999 127.0.0.1:6381"),
        AskError("3999 127.0.0.1:6381"),
        TryAgainError("TRYAGAIN"),
        MasterDownError("MASTERDOWN"),
        ClusterCrossSlotError("CROSSSLOT"),
        SlotNotCoveredError("slot 3999 not covered"),
        RedisClusterException("no nodes reachable"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_cluster_redirection_trouble_is_503(error):
    response = handled(error)

    assert response.status_code == 503
    assert response["Retry-After"].isdigit()
