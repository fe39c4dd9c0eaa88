"""directory.held: a token poll answers from the directory this process holds and
confirms its version in the same round trip as its data; an answer from a version Redis no
longer holds is never sent (the request is answered again the usual way)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config.redis import get_redis
from directory import cache as directory
from directory.keys import version_key
from directory.sessions import SessionStore
from notifications.services import publish
from subscriptions.models import Subscription

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.single_redis]

LIST = "/api/v1/notifications/"
UNREAD = "/api/v1/notifications/unread/"


@pytest.fixture
def nina(warehouse, rep_notice, make_user):
    user = make_user("nina")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return user, client


def get(client, path, warehouse, **headers):
    return client.get(path, {"warehouse": warehouse.pk}, **headers)


@pytest.mark.parametrize("who", ["nina", "browser"])  # a token, a browser's session cookie
@pytest.mark.parametrize("path", [LIST, UNREAD])
def test_a_steady_poll_is_one_round_trip(request, warehouse, rep_notice, round_trips, who, path):
    _, client = request.getfixturevalue(who)
    publish(message_type=rep_notice, warehouse=warehouse, title="x")
    first = get(client, path, warehouse)  # fills the directory, holds the session
    assert first.status_code == 200

    round_trips["n"] = 0
    again = get(client, path, warehouse)
    assert again.status_code == 200
    assert again.json() == first.json()
    assert round_trips["n"] == 1

    round_trips["n"] = 0
    unchanged = get(client, path, warehouse, HTTP_IF_NONE_MATCH=first["ETag"])
    assert unchanged.status_code == 304
    assert round_trips["n"] == 1


def test_an_answer_from_a_moved_version_is_answered_again(warehouse, rep_notice, nina):
    """The directory's version is deleted without this process seeing it (as by another
    process's change): the poll must not be answered from what the process held."""
    _, client = nina
    assert get(client, LIST, warehouse).status_code == 200
    get_redis().delete(version_key())
    Token.objects.filter(user=nina[0]).update(key="0" * 40)  # past the ORM: no version bump

    assert get(client, LIST, warehouse).status_code in (401, 403)


def test_an_answer_that_reads_no_data_is_confirmed_too(warehouse, nina):
    """A refusal made from the held directory alone (here: a warehouse the process holds as
    inactive) is confirmed before it leaves: once the warehouse is active again, the very next
    poll is served."""
    _, client = nina
    warehouse.is_active = False
    warehouse.save()
    assert get(client, UNREAD, warehouse).status_code == 400  # the cache now holds it inactive

    warehouse.is_active = True
    warehouse.save()
    assert get(client, UNREAD, warehouse).status_code == 200


def test_without_a_held_directory_the_poll_reads_the_version_first(warehouse, nina, round_trips):
    _, client = nina
    get(client, LIST, warehouse)
    directory.bump()  # a change: the next poll cannot use what the process held

    round_trips["n"] = 0
    assert get(client, LIST, warehouse).status_code == 200
    # The optimistic run finds the version gone and is answered again the usual way: its
    # data read, then the version (recreated), the data again.
    assert round_trips["n"] >= 2

    round_trips["n"] = 0
    assert get(client, LIST, warehouse).status_code == 200
    assert round_trips["n"] == 1


def test_a_redis_failure_while_confirming_is_answered_the_usual_way(warehouse, nina, monkeypatch):
    from redis.exceptions import ConnectionError as RedisConnectionError

    _, client = nina
    warehouse.is_active = False
    warehouse.save()
    assert get(client, UNREAD, warehouse).status_code == 400

    def down() -> None:
        raise RedisConnectionError("Redis went away")

    monkeypatch.setattr(directory, "confirm_pending", down)
    monkeypatch.setattr(directory, "_read_version", lambda: down())
    reply = get(client, UNREAD, warehouse)
    assert reply.status_code == 503
    assert reply["Retry-After"]


@pytest.fixture
def browser(warehouse, rep_notice, make_user):
    user = make_user("bea")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=user)
    client = APIClient()
    client.force_login(user)
    return user, client


def session_of(client) -> SessionStore:
    return SessionStore(client.cookies[settings.SESSION_COOKIE_NAME].value)


def test_a_session_deleted_since_it_was_held_is_refused(warehouse, browser):
    _, client = browser
    assert get(client, UNREAD, warehouse).status_code == 200  # held from here on
    session_of(client).delete()  # revoked elsewhere: no directory change

    assert get(client, UNREAD, warehouse).status_code == 403


def test_a_session_changed_since_it_was_held_is_read_again(
    warehouse, rep_notice, browser, make_user
):
    """The same session, rewritten in Redis to another user (no directory change): the next
    poll answers for them, not from the copy the process held."""
    _, client = browser
    olga = make_user("olga")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=olga)
    publish(message_type=rep_notice, warehouse=warehouse, title="for both")
    marked = client.post(
        "/api/v1/notifications/read/", {"warehouse": warehouse.pk, "all": True}, format="json"
    )
    assert marked.status_code == 200
    assert get(client, UNREAD, warehouse).json()["unread_count"] == 0  # Bea's, now held

    store = session_of(client)
    store[SESSION_KEY] = str(olga.pk)
    store[HASH_SESSION_KEY] = olga.get_session_auth_hash()
    store.save()

    reply = get(client, UNREAD, warehouse)
    assert reply.status_code == 200
    assert reply.json()["unread_count"] == 1  # Olga's


@pytest.mark.parametrize("who", ["nina", "browser"])
@pytest.mark.parametrize(("path", "kind"), [(LIST, "list"), (UNREAD, "unread")])
def test_a_directory_change_during_a_poll_is_counted_once(request, warehouse, who, path, kind):
    """A poll answered from a held directory that moved on is answered again, but it is still
    one request: the throttle counts it once, and so do the poll and request metrics."""
    from config import metrics
    from config.throttling import UserRateThrottle

    user, client = request.getfixturevalue(who)
    assert get(client, path, warehouse).status_code == 200  # the directory (and session) held
    throttle_log = UserRateThrottle._logs[f"throttle_user_{user.pk}"]
    logged = len(throttle_log)
    polls = metrics.POLLS.labels(kind)._value.get()
    view = "notifications" if kind == "list" else "notifications-unread"
    requests = metrics.REQUESTS.labels("GET", view, "200")._value.get()

    get_redis().delete(version_key())  # another process's change, unseen by this one
    assert get(client, path, warehouse).status_code == 200

    assert len(throttle_log) == logged + 1
    assert metrics.POLLS.labels(kind)._value.get() == polls + 1
    assert metrics.REQUESTS.labels("GET", view, "200")._value.get() == requests + 1
