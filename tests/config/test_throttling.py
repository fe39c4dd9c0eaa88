"""The API's per-user rate limit (config.throttling): DRF's sliding log, kept in memory."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config import throttling
from config.throttling import UserRateThrottle

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_a_minute(monkeypatch):
    clock = {"now": 1_000_000.0}
    monkeypatch.setattr(UserRateThrottle, "rate", "3/min", raising=False)
    monkeypatch.setattr(UserRateThrottle, "timer", lambda self: clock["now"])
    UserRateThrottle.forget_all()
    yield clock
    UserRateThrottle.forget_all()


def client_of(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def statuses(client, n):
    return [client.get("/api/v1/chats/").status_code for _ in range(n)]


def test_the_limit_answers_429_with_retry_after_then_lets_through(alice, three_a_minute):
    client = client_of(alice)
    assert statuses(client, 3) == [200, 200, 200]
    refused = client.get("/api/v1/chats/")
    assert refused.status_code == 429
    assert refused["Retry-After"] == "60"
    assert "detail" in refused.json()

    three_a_minute["now"] += 30
    assert client.get("/api/v1/chats/")["Retry-After"] == "30"
    three_a_minute["now"] += 30.5  # the first three are a minute old
    assert statuses(client, 3) == [200, 200, 200]
    assert statuses(client, 1) == [429]


def test_each_user_has_a_count_of_their_own(alice, bob, three_a_minute):
    assert statuses(client_of(alice), 4)[-1] == 429
    assert statuses(client_of(bob), 3) == [200, 200, 200]


def test_the_users_kept_are_bounded(alice, bob, three_a_minute, monkeypatch):
    monkeypatch.setattr(throttling, "USERS_KEPT", 1)
    assert statuses(client_of(alice), 4)[-1] == 429
    statuses(client_of(bob), 1)  # alice, idle longest, is forgotten
    assert len(UserRateThrottle._logs) == 1
    assert statuses(client_of(alice), 1) == [200]
