"""ETag / If-None-Match on the list and unread endpoints: 304 while nothing changed for the
user, from one Redis round trip and no database query; a new ETag after any change."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config import timestamps
from notifications import lifecycle, services

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clients(replenishers):
    made = []
    for user in replenishers:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        made.append(client)
    return made


def get(client, path, params, etag=None):
    headers = {"HTTP_IF_NONE_MATCH": etag} if etag else {}
    return client.get(path, params, **headers)


@pytest.mark.parametrize("path", ["/api/v1/notifications/", "/api/v1/notifications/unread/"])
def test_nothing_changed_is_304_and_every_change_gives_a_new_etag(
    warehouse, replenishers, clients, send, path, round_trips
):
    rita, ralf = replenishers
    rita_client, _ = clients
    first = send(title="one")
    params = {"warehouse": warehouse.pk, "since": 0}
    full = get(rita_client, path, params)
    etag = full["ETag"]
    assert full.status_code == 200
    assert etag.startswith('W/"')
    get(rita_client, path, params, etag)  # warm: caches and scripts

    round_trips["n"] = 0
    with CaptureQueriesContext(connection) as queries:
        unchanged = get(rita_client, path, params, etag)
    assert unchanged.status_code == 304
    assert unchanged["ETag"] == etag
    assert len(queries) == 0
    assert round_trips["n"] <= 2  # the directory version, then the view's version

    def changed(action) -> None:
        nonlocal etag
        action()
        reply = get(rita_client, path, params, etag)
        assert reply.status_code == 200, action
        assert reply["ETag"] != etag
        etag = reply["ETag"]
        assert get(rita_client, path, params, etag).status_code == 304

    changed(lambda: send(title="two"))  # a publish
    changed(lambda: services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=[first.id]))
    changed(lambda: lifecycle.claim(user=ralf, warehouse_id=warehouse.pk, notification_id=first.id))
    changed(lambda: services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=None))


def test_a_colleagues_read_changes_nothing_for_me(warehouse, replenishers, clients, send):
    rita, _ = replenishers
    _, ralf_client = clients
    note = send()
    params = {"warehouse": warehouse.pk}
    etag = get(ralf_client, "/api/v1/notifications/unread/", params)["ETag"]

    services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=[note.id])

    assert get(ralf_client, "/api/v1/notifications/unread/", params, etag).status_code == 304


def test_an_expiry_changes_the_etag(monkeypatch, warehouse, clients, send):
    client, _ = clients
    send(ttl_seconds=5)
    params = {"warehouse": warehouse.pk}
    etag = get(client, "/api/v1/notifications/unread/", params)["ETag"]
    later = timestamps.now_ms() + 10_000
    monkeypatch.setattr(timestamps, "now_ms", lambda: later)

    reply = get(client, "/api/v1/notifications/unread/", params, etag)

    assert reply.status_code == 200
    assert reply.json()["unread_count"] == 0


def test_a_role_change_changes_the_etag(warehouse, replenishers, role, clients, send):
    rita, _ = replenishers
    client, _ = clients
    send()
    params = {"warehouse": warehouse.pk}
    etag = get(client, "/api/v1/notifications/unread/", params)["ETag"]

    rita.groups.remove(role)

    reply = get(client, "/api/v1/notifications/unread/", params, etag)
    assert reply.status_code == 200
    assert reply.json()["unread_count"] == 0
