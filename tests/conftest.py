"""Fixtures shared by every test: a clean real Redis, users and API clients."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Group, User
from redis import Redis
from rest_framework.test import APIClient

from config.embedded_redis import EmbeddedRedis
from config.redis import get_redis
from subscriptions.models import MessageType, Warehouse


@pytest.fixture(scope="session")
def redis_server() -> EmbeddedRedis:
    from tests.settings import REDIS_SERVER

    return REDIS_SERVER


@pytest.fixture(autouse=True)
def redis(redis_server: EmbeddedRedis) -> Iterator[Redis]:
    """The real Redis the code under test uses, emptied before every test."""
    if redis_server.process.poll() is not None:  # a test stopped it: bring it back
        redis_server.restart()
    client = get_redis()
    client.flushdb()
    yield client
    if redis_server.process.poll() is not None:
        redis_server.restart()


@pytest.fixture
def redis_down(redis_server: EmbeddedRedis) -> Iterator[None]:
    """Redis is unreachable for the duration of the test."""
    redis_server.stop()
    try:
        yield
    finally:
        redis_server.restart()


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
def alice(make_user) -> User:
    return make_user("alice")


@pytest.fixture
def bob(make_user) -> User:
    return make_user("bob")


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
def celery_eager() -> Iterator[None]:
    """Celery tasks run in the calling thread (`.delay()` included), like a worker would."""
    from config.celery import app

    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = False
