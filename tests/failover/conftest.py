"""Fixtures of the failover tests: a 3-master cluster with a replica each, the product's data
pointed at it, and a fresh web process (ASGI server with its own stream hub) on top.

The cluster is started by these tests themselves (as tests/config/test_failover.py does), on
both passes of CI; a test that killed nodes leaves it to be rebuilt by the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token

from devredis.embedded_cluster import EmbeddedCluster, start_cluster
from subscriptions.models import MessageType, Subscription, Warehouse
from subscriptions.services import sync_all
from tests.asgi_server import running
from tests.waiting import eventually


@pytest.fixture(scope="module")
def replicated_cluster() -> Iterator[EmbeddedCluster]:
    cluster = start_cluster(masters=3, replicas=1, node_timeout_ms=1000)
    yield cluster
    cluster.stop()


def whole(cluster: EmbeddedCluster) -> bool:
    return (
        all(node.running for node in cluster.nodes)
        and cluster.is_ok()
        and len(cluster.masters()) == 3
        and all(
            int(n.client().info("replication")["connected_slaves"]) >= 1 for n in cluster.masters()
        )
    )


@pytest.fixture
def on_cluster(settings, replicated_cluster) -> EmbeddedCluster:
    """The product's data (sync and async clients) on the replicated cluster for this test."""
    if not whole(replicated_cluster):
        # Killed nodes rejoin from their nodes.conf (a killed master as its successor's replica).
        replicated_cluster.restart()
        assert eventually(lambda: whole(replicated_cluster), timeout=30), "cluster not whole"
    settings.REDIS_CLUSTER = True
    settings.REDIS_CLUSTER_NODES = [("127.0.0.1", n.port) for n in replicated_cluster.nodes]
    settings.REDIS_CLUSTER_OPTIONS = {}
    settings.REDIS_URL = replicated_cluster.url
    replicated_cluster.flush()
    return replicated_cluster


@pytest.fixture
def fresh_server(on_cluster) -> Iterator[str]:
    """A new web process's ASGI application (a new stream hub) under uvicorn; its base URL."""
    from config import asgi
    from stream.app import StreamApp

    app = StreamApp()

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await app.hub.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "http" and scope["path"].rstrip("/") == asgi.STREAM_PATH.rstrip("/"):
            await app(scope, receive, send)
        else:
            await asgi.django_application(scope, receive, send)

    with running(application, name="uvicorn-fresh") as url:
        yield url


@pytest.fixture
def shift(transactional_db, on_cluster) -> Callable[[int], tuple[Warehouse, list[User]]]:
    """shift(n) -> warehouse SH01 and n operators whose role gets REP_NOTICE there, mirrored."""

    def make(n: int) -> tuple[Warehouse, list[User]]:
        warehouse = Warehouse.objects.create(code="SH01", name="Shanghai 1")
        message_type = MessageType.objects.create(code="REP_NOTICE", name="Replenish")
        role = Group.objects.create(name="Replenishment")
        Subscription.objects.create(message_type=message_type, warehouse=warehouse, role=role)
        users = []
        for i in range(n):
            user = User.objects.create_user(f"op{i}", password="pw")
            user.groups.add(role)
            users.append(user)
        sync_all()
        return warehouse, users

    return make


def token_headers(user: User) -> dict[str, str]:
    token, _ = Token.objects.get_or_create(user=user)
    return {"Authorization": f"Token {token.key}"}
