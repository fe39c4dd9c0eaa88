"""directory.cache: polls cost no database query in steady state, and every change of a
role, a permission, a token, a user or a warehouse is seen at the very next request."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from directory import cache as directory
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


def test_a_token_deleted_while_a_request_reads_it_is_not_cached(warehouse, poller, make_user):
    """Issue 20, row C: read token -> delete token -> another request syncs the cache -> the
    first request stores what it read. The deleted token must not live on."""
    _, token, client = poller
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_user('o')).key}")
    fired: list[bool] = []

    def between_read_and_store(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not fired and "authtoken_token" in sql and token.key in (params or ()):
            fired.append(True)
            Token.objects.filter(pk=token.pk).delete()  # bumps the version
            assert (
                other.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).status_code == 200
            )
        return result

    with connection.execute_wrapper(between_read_and_store):
        client.get("/api/v1/notifications/", {"warehouse": warehouse.pk})
    assert fired

    assert poll(client, warehouse)[0].status_code in (401, 403)


@pytest.fixture
def publisher(make_user):
    pete = make_user("pete")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=pete).key}")
    return pete, client


def publishes(client, warehouse, rep_notice) -> int:
    body = {"message_type": rep_notice.code, "warehouse": warehouse.pk, "title": "x"}
    return client.post("/api/v1/notifications/", body, format="json").status_code


def test_a_revoked_permission_is_refused_at_the_next_request(warehouse, rep_notice, publisher):
    """Issue 20, row D: the permission removed from the user, and the one removed from their
    group, are both honoured by the next token request."""
    pete, client = publisher
    permission = Permission.objects.get(codename="publish_notification")
    pete.user_permissions.add(permission)
    assert publishes(client, warehouse, rep_notice) == 201

    pete.user_permissions.remove(permission)
    assert publishes(client, warehouse, rep_notice) == 403

    group = Group.objects.create(name="Publishers")
    pete.groups.add(group)
    group.permissions.add(permission)
    assert publishes(client, warehouse, rep_notice) == 201
    group.permissions.remove(permission)
    assert publishes(client, warehouse, rep_notice) == 403


def test_each_request_gets_its_own_user_and_token(poller):
    """Nothing one request caches on the user (Django's permission cache) reaches the next."""
    nina, token, _ = poller
    first, second = directory.token(token.key), directory.token(token.key)
    assert first is not None
    assert second is not None

    assert first.user.pk == second.user.pk == nina.pk
    assert first is not second
    assert first.user is not second.user
    assert first.user.username == "nina"
    assert first.user.is_active


def test_holding_many_tokens_takes_two_queries_and_answers_them_all_after(make_user, role):
    """A burst of stream opens after the directory was dropped: their tokens, users and roles
    are read in two queries for all, then answered from the cache."""
    users = [make_user(f"op{i}", *([role] if i % 2 else [])) for i in range(30)]
    roles = {u.pk: [role.pk] if i % 2 else [] for i, u in enumerate(users)}
    keys = [Token.objects.create(user=u).key for u in users]
    directory.bump()
    with directory.request_scope():
        with CaptureQueriesContext(connection) as captured:
            directory.hold_tokens([*keys, "not-a-token"])
        assert len(captured) == 2
        with CaptureQueriesContext(connection) as captured:
            for user, key in zip(users, keys, strict=True):
                token = directory.token(key)
                assert token is not None
                assert token.user.pk == user.pk
                assert directory.role_ids(token.user) == roles[user.pk]
        assert len(captured) == 0


def test_tokens_deleted_while_held_in_bulk_are_not_cached(make_user):
    """As for one token (issue 20, row C): a change between the bulk read and the store keeps
    what was read out of the cache."""
    user = make_user("op")
    key = Token.objects.create(user=user).key
    directory.bump()
    fired: list[bool] = []

    def between_read_and_store(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not fired and "auth_user_groups" in sql:
            fired.append(True)
            Token.objects.filter(key=key).delete()  # bumps the version
            with directory.request_scope():  # another request moves the cache on
                assert directory.token("not-a-token") is None
        return result

    with directory.request_scope(), connection.execute_wrapper(between_read_and_store):
        directory.hold_tokens([key])
    assert fired
    with directory.request_scope():
        assert directory.token(key) is None


def test_holding_many_users_takes_two_queries_and_answers_them_after(make_user, role):
    """The sessions' users of a burst of browsers' streams, and their roles: two queries for
    all, an unknown id held as unknown."""
    users = [make_user(f"op{i}", *([role] if i % 2 else [])) for i in range(10)]
    directory.bump()
    with directory.request_scope():
        with CaptureQueriesContext(connection) as captured:
            directory.hold_users([*(str(u.pk) for u in users), "999999", "not-an-id", None])
        assert len(captured) == 2
        with CaptureQueriesContext(connection) as captured:
            found = [directory.user(u.pk) for u in users]
            assert [f.username if f else None for f in found] == [u.username for u in users]
            assert directory.user(999999) is None
            assert [directory.role_ids(u) for u in users] == [
                [role.pk] if i % 2 else [] for i in range(10)
            ]
        assert len(captured) == 0


def test_holding_users_already_held_reads_only_the_roles_missing(make_user, role):
    """A stream process may hold a user (from a session open) without their roles."""
    nina = make_user("nina", role)
    directory.bump()
    with directory.request_scope():
        directory.user(nina.pk)  # held: the user, not the roles
        with CaptureQueriesContext(connection) as captured:
            directory.hold_users([nina.pk])
        assert len(captured) == 1
        with CaptureQueriesContext(connection) as captured:
            assert directory.role_ids(nina) == [role.pk]
            directory.hold_users([nina.pk])
        assert len(captured) == 0


def test_an_instance_from_the_cache_is_as_loaded_from_the_database(warehouse, rep_notice):
    """Each call gives a new instance with the row's values, marked as loaded (saving it
    updates the row, never inserts one)."""
    from subscriptions.models import MessageType, Warehouse

    for cached, stored in (
        (directory.message_type(rep_notice.code), MessageType.objects.get(pk=rep_notice.pk)),
        (directory.warehouse(warehouse.pk), Warehouse.objects.get(pk=warehouse.pk)),
    ):
        fields = type(stored)._meta.concrete_fields
        assert [getattr(cached, f.attname) for f in fields] == [
            getattr(stored, f.attname) for f in fields
        ]
        assert cached is not None
        assert (cached._state.adding, cached._state.db) == (False, "default")
    again = directory.message_type(rep_notice.code)
    assert again is not None
    assert again is not directory.message_type(rep_notice.code)
    again.name = "Renamed"
    again.save()
    assert MessageType.objects.filter(code=rep_notice.code).count() == 1
    assert MessageType.objects.get(pk=rep_notice.pk).name == "Renamed"


def test_a_message_types_values_are_read_without_an_instance_and_follow_a_change(rep_notice):
    names = ("remind_every_seconds", "remind_max", "email_after_seconds")
    assert directory.message_type_values("NO_SUCH_TYPE", names) is None
    stored = directory.message_type(rep_notice.code)
    assert directory.message_type_values(rep_notice.code, names) == tuple(
        getattr(stored, name) for name in names
    )
    rep_notice.remind_every_seconds, rep_notice.remind_max = 60, 2
    rep_notice.save()
    assert directory.message_type_values(rep_notice.code, names) == (
        60,
        2,
        rep_notice.email_after_seconds,
    )


def test_a_warehouse_is_found_by_its_code_and_not_by_its_old_one(warehouse):
    old = warehouse.code
    assert directory.warehouse_values(("id", "is_active"), code=old) == (warehouse.pk, True)
    warehouse.code = f"{old}X"
    warehouse.save()
    assert directory.warehouse_values(("id",), code=old) is None
    assert directory.warehouse_values(("id",), code=f"{old}X") == (warehouse.pk,)
    assert directory.warehouse_values(("code",), warehouse_id=warehouse.pk) == (f"{old}X",)
    assert directory.warehouse_values(("id",), code="NO-SUCH") is None
