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
    assert round_trips["n"] == 1  # the view's version, with the directory's

    def changed(action) -> None:
        nonlocal etag
        action()
        round_trips["n"] = 0
        reply = get(rita_client, path, params, etag)
        assert reply.status_code == 200, action
        # A stale ETag costs no separate check: the answer comes in the same round trip.
        assert round_trips["n"] == 1, action
        assert reply["ETag"] != etag
        assert reply.json() == get(rita_client, path, params).json()
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


@pytest.mark.parametrize("path", ["/api/v1/notifications/", "/api/v1/notifications/unread/"])
def test_a_browsers_stale_etag_is_answered_in_one_round_trip(
    warehouse, replenishers, send, path, round_trips
):
    """The page sends its last ETag with every poll: after a change, the answer comes in the
    same round trip as the session, the directory's version and the check."""
    rita, _ = replenishers
    client = APIClient()
    client.force_login(rita)
    params = {"warehouse": warehouse.pk}
    send(title="before")  # warm with an item: N's parts held (its type's actions, SPEC 14)
    etag = get(client, path, params)["ETag"]
    assert get(client, path, params, etag).status_code == 304  # warm
    send(title="news")

    round_trips["n"] = 0
    with CaptureQueriesContext(connection) as queries:
        reply = get(client, path, params, etag)

    assert reply.status_code == 200
    assert round_trips["n"] == 1
    assert len(queries) == 0
    assert reply["ETag"] != etag
    round_trips["n"] = 0
    assert get(client, path, params, reply["ETag"]).status_code == 304
    assert round_trips["n"] == 1


@pytest.mark.parametrize(
    "sent",
    [
        "*",
        '"abc"',
        'W/"0123456789ABCDEF01234567"',  # ours are lower case
        'W/"0123456789abcdef0123456"',  # one digit short
        "W/{etag}x",
    ],
)
def test_etags_that_are_not_the_current_one_get_the_full_answer(warehouse, clients, send, sent):
    client, _ = clients
    send()
    params = {"warehouse": warehouse.pk}
    full = get(client, "/api/v1/notifications/unread/", params)

    reply = get(client, "/api/v1/notifications/unread/", params, sent.format(etag=full["ETag"]))

    assert reply.status_code == 200
    assert reply.json() == full.json()
    assert reply["ETag"] == full["ETag"]


def test_the_current_etag_among_others_is_304(warehouse, clients, send):
    client, _ = clients
    send()
    params = {"warehouse": warehouse.pk, "limit": 10, "include_read": "true"}
    etag = get(client, "/api/v1/notifications/", params)["ETag"]

    others = [f'W/"{n:024x}"' for n in range(100)]
    sent = ", ".join([*others, etag, '"other"'])
    reply = get(client, "/api/v1/notifications/", params, sent)

    assert reply.status_code == 304
    assert reply["ETag"] == etag
