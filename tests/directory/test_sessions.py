"""A browser's poll: the session from Redis (with the directory's version, in the same round
trip) and its user from the directory, so a steady poll queries nothing; a sign-out, a
deactivation or a new password still ends the session at the very next request."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from directory import cache as directory
from directory.sessions import SessionStore
from notifications.services import publish
from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def browser(warehouse, rep_notice, role, make_user):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    nina = make_user("nina", role)
    client = APIClient()
    client.force_login(nina)
    return nina, client


def poll(client, warehouse, path="/api/v1/notifications/"):
    with CaptureQueriesContext(connection) as queries:
        reply = client.get(path, {"warehouse": warehouse.pk})
    return reply, len(queries)


def test_a_steady_session_poll_queries_nothing(warehouse, rep_notice, browser):
    _, client = browser
    publish(message_type=rep_notice, warehouse=warehouse, title="x")
    poll(client, warehouse)  # fills the directory
    for path in ("/api/v1/notifications/", "/api/v1/notifications/unread/"):
        reply, queries = poll(client, warehouse, path)
        assert reply.status_code == 200
        assert reply.json()["unread_count"] == 1
        assert queries == 0


@pytest.mark.single_redis  # in cluster mode the cache is on another server: two round trips
def test_the_session_read_brings_the_directory_version(warehouse, browser, monkeypatch):
    _, client = browser
    poll(client, warehouse)
    separate: list[bool] = []
    read = directory._read_version

    def counted() -> str:
        separate.append(True)
        return read()

    monkeypatch.setattr(directory, "_read_version", counted)
    assert poll(client, warehouse)[0].status_code == 200
    assert separate == []


def test_sign_out_ends_the_session_at_once(warehouse, browser):
    _, client = browser
    assert poll(client, warehouse)[0].status_code == 200
    client.logout()
    assert poll(client, warehouse)[0].status_code == 403


def test_deactivation_and_a_new_password_end_the_session_at_the_next_request(
    warehouse, browser, make_user
):
    nina, client = browser
    assert poll(client, warehouse)[0].status_code == 200
    nina.is_active = False
    nina.save()
    assert poll(client, warehouse)[0].status_code == 403
    nina.is_active = True  # as with Django's ModelBackend: refused while inactive
    nina.save()
    assert poll(client, warehouse)[0].status_code == 200
    nina.set_password("a-new-one")
    nina.save()
    assert poll(client, warehouse)[0].status_code == 403
    assert not SessionStore().exists(client.cookies[settings.SESSION_COOKIE_NAME].value)


def test_a_session_outlives_losing_its_cache_entry(warehouse, browser):
    """The row is the durable copy: a Redis flush or restart signs nobody out."""
    nina, client = browser
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    store = SessionStore(key)
    assert store[SESSION_KEY] == str(nina.pk)
    cache.delete(store.cache_key)
    assert poll(client, warehouse)[0].status_code == 200
    assert cache.get(store.cache_key) is not None  # put back by the read


def test_a_deleted_session_is_refused(warehouse, browser):
    """Revoking one session (an administrator, or a sign-out elsewhere) goes through the
    store, which removes both copies."""
    _, client = browser
    SessionStore(client.cookies[settings.SESSION_COOKIE_NAME].value).delete()
    assert poll(client, warehouse)[0].status_code == 403


@pytest.mark.skipif(settings.REDIS_CLUSTER, reason="single Redis server only (one round trip)")
def test_preloading_reads_many_sessions_and_the_version_in_one_round_trip(make_user):
    """A burst of browsers' streams: their sessions and the directory's version together."""
    from directory.sessions import preload

    clients = []
    for i in range(5):
        client = APIClient()
        client.force_login(make_user(f"op{i}"))
        clients.append(client)
    session_keys = [c.cookies[settings.SESSION_COOKIE_NAME].value for c in clients]
    SessionStore(session_keys[0]).delete()  # signed out
    executed = []
    store: Any = SessionStore()  # Django's cached_db attribute, unknown to the stubs
    pipeline_class = type(store._cache.client.get_client(write=False).pipeline())
    original = pipeline_class.execute

    def counted(self, *args, **kwargs):
        executed.append(len(self.command_stack))
        return original(self, *args, **kwargs)

    pipeline_class.execute = counted
    try:
        with directory.request_scope():
            found = preload([*session_keys, "no-such-session-key"])
    finally:
        pipeline_class.execute = original
    assert executed == [2]  # one round trip: the version and one MGET
    assert set(found) == set(session_keys[1:])
    for key in session_keys[1:]:
        assert found[key] == SessionStore(key).load()
