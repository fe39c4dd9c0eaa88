"""config.directory: polls cost no database query in steady state, and every change of a
role, a token, a user or a warehouse is seen at the very next request."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from notifications.services import publish
from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def poller(warehouse, rep_notice, role, make_user):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    nina = make_user("nina")
    token = Token.objects.create(user=nina)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return nina, token, client


def poll(client, warehouse, path="/api/v1/notifications/"):
    with CaptureQueriesContext(connection) as queries:
        reply = client.get(path, {"warehouse": warehouse.pk})
    return reply, len(queries)


def test_a_steady_poll_queries_nothing_and_a_role_change_shows_at_once(
    warehouse, rep_notice, role, poller
):
    nina, _, client = poller
    note = publish(message_type=rep_notice, warehouse=warehouse, title="x")
    poll(client, warehouse)  # fills the cache

    for path in ("/api/v1/notifications/", "/api/v1/notifications/unread/"):
        reply, queries = poll(client, warehouse, path)
        assert reply.status_code == 200
        assert queries == 0
        assert reply.json()["unread_count"] == 0

    nina.groups.add(role)
    reply, _ = poll(client, warehouse)
    assert [n["id"] for n in reply.json()["results"]] == [note.id]
    assert reply.json()["unread_count"] == 1

    nina.groups.remove(role)
    assert poll(client, warehouse)[0].json()["unread_count"] == 0


def test_a_deleted_token_or_inactive_user_is_refused_at_the_next_poll(warehouse, poller):
    nina, token, client = poller
    assert poll(client, warehouse)[0].status_code == 200

    nina.is_active = False
    nina.save()
    assert poll(client, warehouse)[0].status_code in (401, 403)
    nina.is_active = True
    nina.save()
    assert poll(client, warehouse)[0].status_code == 200

    token.delete()
    assert poll(client, warehouse)[0].status_code in (401, 403)


def test_a_deactivated_warehouse_is_refused_at_the_next_poll(warehouse, poller):
    _, _, client = poller
    assert poll(client, warehouse)[0].status_code == 200

    warehouse.is_active = False
    warehouse.save()

    assert poll(client, warehouse)[0].status_code == 400
