"""Fixtures shared by every test: a clean real Redis, users and API clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Group, Permission, User
from redis import Redis
from redis.cluster import RedisCluster
from redis.connection import AbstractConnection
from rest_framework.test import APIClient

from config import timestamps
from config.redis import get_redis
from devredis.embedded_redis import EmbeddedRedis
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.rules_sql_role import (
    ON_POSTGRESQL,
    rules_sql_role,  # noqa: F401  (a fixture)
)
from tests.settings import REDIS_CLUSTER_UNDER_TEST as CLUSTER
from tests.settings import REDIS_SERVER
from tests.smtp import Mailbox, smtp_server


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On the cluster, skip what is about the one plain server: tests that stop it by hand,
    count its round trips or read its stats, and those marked `single_redis` (outages go
    through `redis_down`, which works on both)."""
    if CLUSTER is None:
        return
    skip = pytest.mark.skip(reason="single Redis server only (stops or measures the one server)")
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if {"redis_server", "round_trips"} & fixtures or item.get_closest_marker("single_redis"):
            item.add_marker(skip)


DAY_MS = 24 * 60 * 60 * 1000


class Clock:
    """The product's one clock (`config.timestamps.now_ms`) under a test's control."""

    def __init__(self, real: Callable[[], int]) -> None:
        self._real = real
        self._offset_ms = 0
        self._stopped_at: int | None = None

    def now_ms(self) -> int:
        if self._stopped_at is not None:
            return self._stopped_at
        return self._real() + self._offset_ms

    def move_by(self, ms: int) -> None:
        """From now on time runs `ms` ahead of the real one (negative: behind; 0: real)."""
        self._stopped_at = None
        self._offset_ms = ms

    def days_ago(self, days: float) -> None:
        """From now on time runs `days` behind the real one (0: the real time again)."""
        self.move_by(-round(days * DAY_MS))

    def stop_at(self, ms: int) -> None:
        """Time stands still at `ms` (milliseconds since the epoch)."""
        self._stopped_at = ms


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Moves time for everything the product does (it all reads `timestamps.now_ms()`)."""
    moved = Clock(timestamps.now_ms)
    monkeypatch.setattr(timestamps, "now_ms", moved.now_ms)
    return moved


@pytest.fixture(scope="session")
def redis_server() -> EmbeddedRedis:
    """The plain Redis server (on the cluster pass it holds only the broker and the cache)."""
    return REDIS_SERVER


def _bring_redis_back() -> None:
    if CLUSTER is not None:
        if not all(node.running for node in CLUSTER.nodes):
            CLUSTER.restart()
    elif REDIS_SERVER.process.poll() is not None:  # a test stopped it: bring it back
        REDIS_SERVER.restart()


@pytest.fixture(scope="session", autouse=True)
def _rules_sql_role_on_postgresql(request: pytest.FixtureRequest) -> None:
    """PostgreSQL: the SQL rules' role and its grants exist in every test process's database
    before any test (the demo's data checks its SQL rule, not only the rule tests), as in a
    deployment. Session-scoped, so it runs before any test's transaction: a GRANT made inside
    one would be rolled back with it."""
    if ON_POSTGRESQL:
        request.getfixturevalue("rules_sql_role")


@pytest.fixture(autouse=True)
def redis() -> Iterator[Redis | RedisCluster]:
    """The real Redis the code under test uses, emptied before every test (every master of
    the cluster on the `--redis-cluster` pass)."""
    _bring_redis_back()
    client = get_redis()
    if isinstance(client, RedisCluster):
        client.flushdb(target_nodes=RedisCluster.PRIMARIES)
    else:
        client.flushdb()
    yield client
    _bring_redis_back()


@pytest.fixture
def redis_down() -> Iterator[None]:
    """Redis is unreachable for the duration of the test (every node of the cluster)."""
    if CLUSTER is not None:
        CLUSTER.stop_nodes()
    else:
        REDIS_SERVER.stop()
    try:
        yield
    finally:
        _bring_redis_back()


@pytest.fixture
def warehouse(db) -> Warehouse:
    return Warehouse.objects.create(code="SH01", name="Shanghai 1")


@pytest.fixture
def other_warehouse(db) -> Warehouse:
    return Warehouse.objects.create(code="BJ02", name="Beijing 2")


@pytest.fixture
def rep_notice(db) -> MessageType:
    return MessageType.objects.create(code="REP_NOTICE", name="补货通知", default_ttl_seconds=3600)


@pytest.fixture
def role(db) -> Group:
    return Group.objects.create(name="Replenishment")


@pytest.fixture
def make_user(db):
    def make(username: str, *groups: Group, **extra) -> User:
        user = User.objects.create_user(username=username, password="pw-" + username, **extra)
        user.groups.add(*groups)
        return user

    return make


@pytest.fixture
def replenishers(db, warehouse, rep_notice, role, make_user):
    """Two users of the Replenishment role, which receives REP_NOTICE in SH01."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role), make_user("ralf", role)


@pytest.fixture
def publisher(make_user):
    """Pete, who may publish notifications over the API (as the WMS's account does)."""
    user = make_user("pete")
    user.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    return user


@pytest.fixture
def alice(make_user) -> User:
    return make_user("alice")


@pytest.fixture
def bob(make_user) -> User:
    return make_user("bob")


@pytest.fixture
def staff_client(client):
    """A Django test client logged in as a superuser (for the admin)."""
    client.force_login(User.objects.create_superuser("boss", "boss@example.com", "pw"))
    return client


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def client_for():
    """An API client authenticated as the given user (as a token client would be)."""

    def make(user: User) -> APIClient:
        client = APIClient()
        client.force_authenticate(user)
        return client

    return make


@pytest.fixture
def prefix() -> str:
    return django_settings.WMS_REDIS_PREFIX


@pytest.fixture
def fresh_schedule() -> Iterator[None]:
    """The per-process schedule of shifts (shifts/cache.py) is read afresh before and after
    the test, so that no test sees the shifts another one made."""
    from shifts import cache

    cache.forget()
    yield
    cache.forget()


@pytest.fixture
def smtp(settings) -> Iterator[Mailbox]:
    """A real SMTP server on 127.0.0.1 (aiosmtpd), which Django's SMTP backend sends to."""
    with smtp_server(Mailbox(), settings) as mailbox:
        yield mailbox


@pytest.fixture
def celery_eager() -> Iterator[None]:
    """Celery tasks run in the calling thread (`.delay()` included), like a worker would."""
    from config.celery import app

    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = False


@pytest.fixture
def round_trips(monkeypatch):
    """Counts the requests written to Redis (a pipeline is one) by the code under test."""
    counter = {"n": 0}
    original = AbstractConnection.send_packed_command

    def counting(self, command, check_health=True):
        counter["n"] += 1
        return original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    return counter


@pytest.fixture(scope="session")
def asgi_server() -> Iterator[str]:
    """The base URL of config.asgi:application under uvicorn (see tests/asgi_server.py).

    One per test process, shared by every test that needs it: the stream's hub and its access
    watcher belong to the process, and a second server on another event loop in the same
    process would have two loops serving them at once (events pushed across threads).
    """
    from tests.asgi_server import running

    with running() as url:
        yield url


@pytest.fixture
def cold_cache(monkeypatch):
    """A process that has not published yet (say, a web worker started after a restart): it
    knows no subscribers."""
    from notifications import store

    monkeypatch.setattr(store, "subscriber_cache", store._SubscriberCache())


@pytest.fixture(scope="session", autouse=True)
def _views_imported_with_the_default_settings(django_db_blocker):
    """Some views read a setting when their module is imported (a serializer field's
    max_length, such as CHAT_MAX_MEMBERS): import every view before any test overrides a
    setting, or the first test to make a request would fix its override for the session."""
    from django.urls import get_resolver

    with django_db_blocker.unblock():
        assert get_resolver().url_patterns
