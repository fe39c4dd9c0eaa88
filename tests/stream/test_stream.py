"""GET /api/v1/stream/ under a real uvicorn server: events, replay, auth, outages (SPEC 8)."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from messaging import services as chat_services
from notifications import lifecycle
from notifications.services import mark_read, publish
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def notify(warehouse: Warehouse, title: str = "Replenish A-01-03", **kwargs):
    return publish(message_type="REP_NOTICE", warehouse=warehouse, title=title, **kwargs)


def listed(user: User, warehouse: Warehouse, **params) -> list[dict]:
    client = APIClient()
    client.force_authenticate(user)
    answer = client.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk, "include_read": "true", **params}
    )
    assert answer.status_code == 200
    return answer.json()["results"]


def test_a_publish_arrives_as_the_list_endpoint_shows_it(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    stream = open_stream(rita, warehouse)
    result = notify(warehouse, body="Stock is -12", data={"bin": "A-01-03", "qty": -12})

    event = stream.until("notification")
    assert event.id == str(result.cursor)
    assert json.loads(event.data) == listed(rita, warehouse)[0]
    assert json.loads(event.data)["id"] == result.id


def test_the_session_cookie_of_the_browser_authenticates(
    stream_client, session_cookie_for, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    stream_client.cookies.update(session_cookie_for(rita))
    with stream_client.stream("GET", "/api/v1/stream/", params={"warehouse": warehouse.pk}) as r:
        assert r.status_code == 200
        from tests.stream.conftest import EventStream

        stream = EventStream(r)
        ready = stream.until("ready")
        result = notify(warehouse)
        assert stream.until("notification").id == str(result.cursor)
        assert ready.id is not None
        assert int(ready.id) < result.cursor


def test_each_user_gets_only_what_reaches_their_inboxes(
    open_stream, subscribed, make_user, warehouse, other_warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    bob = make_user("bob")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=bob)
    Subscription.objects.create(message_type=rep_notice, warehouse=other_warehouse, user=rita)
    rita_stream = open_stream(rita, warehouse)
    bob_stream = open_stream(bob, warehouse)

    notify(other_warehouse, "elsewhere")  # rita's, but another warehouse than her stream's
    Subscription.objects.filter(role__isnull=False).delete()
    only_bob = notify(warehouse, "only bob")
    Subscription.objects.create(
        message_type=rep_notice, warehouse=warehouse, role=rita.groups.get()
    )
    both = notify(warehouse, "both")

    assert [bob_stream.until("notification").id for _ in range(2)] == [
        str(only_bob.cursor),
        str(both.cursor),
    ]
    # Rita's first event is the one meant for her: nothing of the others came before it.
    assert rita_stream.until("notification").id == str(both.cursor)


def test_a_claim_arrives_with_its_new_cursor_state_and_each_users_read_state(
    open_stream, subscribed, warehouse, rep_notice
):
    """The claim script gives the notification a new cursor and PUBLISHes it: both streams
    show the same id as claimed by rita; it is read for rita (claiming reads it), not for ralf."""
    rita = subscribed("rita", warehouse, rep_notice)
    ralf = User.objects.create_user("ralf")
    ralf.groups.add(rita.groups.get())
    first = notify(warehouse)
    rita_stream = open_stream(rita, warehouse, since=first.cursor)
    ralf_stream = open_stream(ralf, warehouse, since=first.cursor)

    claimed = lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=first.id)

    assert claimed.cursor > first.cursor
    for stream, read in ((rita_stream, True), (ralf_stream, False)):
        event = stream.until("notification")
        data = json.loads(event.data)
        assert (event.id, data["id"], data["cursor"]) == (
            str(claimed.cursor),
            first.id,
            claimed.cursor,
        )
        assert data["status"] == "claimed"
        assert data["claimed_by"]["username"] == "rita"
        assert data["read"] is read


def test_a_resolve_by_the_system_arrives_too(open_stream, subscribed, warehouse, rep_notice):
    rita = subscribed("rita", warehouse, rep_notice)
    first = notify(warehouse, key="A-01-03")
    stream = open_stream(rita, warehouse, since=first.cursor)

    lifecycle.resolve_by_system(warehouse_id=warehouse.pk, notification_id=first.id)

    data = json.loads(stream.until("notification").data)
    assert (data["id"], data["status"], data["resolved_by"]) == (first.id, "resolved", None)


def test_chat_messages_reach_the_members_streams_only(open_stream, make_user, warehouse, db):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    alice_stream = open_stream(alice, warehouse)
    carol_stream = open_stream(carol, warehouse)
    chat = chat_services.chat_open_direct(user=bob, other_id=alice.pk)
    sent = chat_services.message_send(user=bob, chat_id=chat.id, body="Bin A-01-03 is empty")

    event = alice_stream.until("chat")
    assert event.id is None  # chat events leave the notification cursor alone
    payload = json.loads(event.data)
    assert payload["chat"] == chat.id
    assert payload["message"]["id"] == sent.id
    assert payload["message"]["sender"] == {"id": bob.pk, "username": "bob"}
    assert payload["message"]["body"] == "Bin A-01-03 is empty"
    api = APIClient()
    api.force_authenticate(alice)
    listed_messages = api.get(f"/api/v1/chats/{chat.id}/messages/").json()["results"]
    assert payload["message"] == listed_messages[-1]

    # Carol is in no chat: her first event is a notification published afterwards.
    Subscription.objects.create(
        message_type=MessageType.objects.create(code="REP_NOTICE", name="R"),
        warehouse=warehouse,
        user=carol,
    )
    later = notify(warehouse)
    first = carol_stream.next()
    assert (first.event, first.id) == ("notification", str(later.cursor))


def test_since_and_last_event_id_replay_everything_after_the_cursor(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    results = [notify(warehouse, f"n{i}") for i in range(205)]  # more than one replay page
    mark_read(user=rita, warehouse_id=warehouse.pk, ids=[results[3].id])

    stream = open_stream(rita, warehouse, since=results[2].cursor)
    replayed = [int(e.id) for e in stream.replayed]
    assert replayed == [r.cursor for r in results[3:]]
    assert json.loads(stream.replayed[0].data)["read"] is True  # read ones too: every change

    again = open_stream(rita, warehouse, since=0, last_event_id=results[200].cursor)
    assert [int(e.id) for e in again.replayed] == [r.cursor for r in results[201:]]


def test_reconnecting_under_concurrent_publishing_loses_and_repeats_nothing(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    total = 300
    published: list[int] = []

    def publisher() -> None:
        for i in range(total):
            published.append(notify(warehouse, f"n{i}").cursor)

    start = notify(warehouse, "before").cursor
    thread = threading.Thread(target=publisher)
    thread.start()
    received: list[int] = []
    try:
        # Reconnect after every few events, from the last one received, until all are in.
        while len(received) < total:
            last = received[-1] if received else start
            stream = open_stream(rita, warehouse, last_event_id=last)
            received += [int(e.id) for e in stream.replayed]
            for _ in range(7):
                if len(received) >= total:
                    break
                received.append(int(stream.until("notification").id))
            stream.response.close()
    finally:
        thread.join()
    assert received == published  # every one, once, in order


def test_a_comment_keeps_an_idle_stream_open(
    open_stream, subscribed, warehouse, rep_notice, settings
):
    settings.STREAM_HEARTBEAT_SECONDS = 0.2
    stream = open_stream(subscribed("rita", warehouse, rep_notice), warehouse)
    assert stream.next(comments=True).comment


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Token not-a-token"}])
def test_anonymous_and_bad_tokens_are_refused(stream_client, warehouse, headers, db):
    answer = stream_client.get(
        "/api/v1/stream/", params={"warehouse": warehouse.pk}, headers=headers
    )
    assert answer.status_code == 403
    assert answer.json()["detail"]


def test_unknown_inactive_and_missing_warehouses(stream_client, token_for, alice, warehouse):
    headers = token_for(alice)
    Warehouse.objects.filter(pk=warehouse.pk).update(is_active=False)
    for params in ({"warehouse": warehouse.pk}, {"warehouse": 99999}):
        answer = stream_client.get("/api/v1/stream/", params=params, headers=headers)
        assert answer.status_code == 404
        assert "warehouse" in answer.json()["detail"]
    for params in ({}, {"warehouse": "SH01"}):
        answer = stream_client.get("/api/v1/stream/", params=params, headers=headers)
        assert answer.status_code == 400
        assert answer.json()["warehouse"]
    active = Warehouse.objects.create(code="GZ03", name="Guangzhou")
    answer = stream_client.get(
        "/api/v1/stream/", params={"warehouse": active.pk, "since": "x"}, headers=headers
    )
    assert (answer.status_code, list(answer.json())) == (400, ["since"])


def test_redis_down_gives_503_before_the_stream_starts(
    stream_client, token_for, alice, warehouse, redis_server
):
    headers = token_for(alice)
    redis_server.stop()
    try:
        answer = stream_client.get(
            "/api/v1/stream/", params={"warehouse": warehouse.pk}, headers=headers
        )
    finally:
        redis_server.restart()
    assert answer.status_code == 503
    assert answer.headers["Retry-After"]
    assert answer.json()["detail"]


def test_a_stream_ends_when_redis_goes_away_and_the_reconnect_replays(
    open_stream, subscribed, warehouse, rep_notice, redis_server
):
    rita = subscribed("rita", warehouse, rep_notice)
    stream = open_stream(rita, warehouse)
    before = notify(warehouse, "before")
    assert stream.until("notification").id == str(before.cursor)

    redis_server.stop()
    assert stream.next() is None  # ended cleanly, not hanging and not an error
    redis_server.restart()
    Subscription.objects.get().save()  # the restarted Redis is empty: mirror again
    after = notify(warehouse, "after")

    def reconnected():
        try:
            return open_stream(rita, warehouse, last_event_id=stream.last_id)
        except AssertionError:  # 503 while the hub subscribes again
            return None

    assert eventually(reconnected, timeout=10)
    again = open_stream(rita, warehouse, last_event_id=stream.last_id)
    assert [e.id for e in again.replayed] == [str(after.cursor)]


def test_open_streams_hold_no_thread_each(open_stream, subscribed, warehouse, rep_notice, settings):
    settings.STREAM_MAX_PER_USER = 30
    rita = subscribed("rita", warehouse, rep_notice)
    open_stream(rita, warehouse)  # warm up the worker threads
    threads = threading.active_count()
    streams = [open_stream(rita, warehouse) for _ in range(20)]
    assert threading.active_count() - threads < 5
    result = notify(warehouse)
    assert {s.until("notification").id for s in streams} == {str(result.cursor)}


def test_django_endpoints_answer_under_asgi(asgi_server, token_for, alice, warehouse):
    with httpx.Client(base_url=asgi_server, timeout=10) as client:
        api = client.get(
            "/api/v1/notifications/unread/",
            params={"warehouse": warehouse.pk},
            headers=token_for(alice),
        )
        assert api.status_code == 200
        assert api.json()["unread_count"] == 0
        static = client.get("/static/web/js/stream.js")  # WhiteNoise, through Django's app
        assert static.status_code == 200
        assert "EventSource" in static.text
        assert client.get("/login/").status_code == 200
        assert client.get("/").status_code == 302  # anonymous: to the login page


def test_slow_streams_are_closed_not_buffered():
    import asyncio

    from stream.hub import Closed, Listener

    async def scenario() -> str:
        listener = Listener(user_id=1, warehouse_id=1, role_ids=[], limit=3)
        for cursor in range(1, 5):
            listener.offer(cursor, b"x")
        with pytest.raises(Closed) as closed:
            await listener.take(0)
        return closed.value.reason

    assert asyncio.run(scenario()) == "slow"


def test_stream_time_is_not_spent_in_threads_while_idle(
    open_stream, subscribed, warehouse, rep_notice
):
    """Latency sanity: an event reaches an open stream well within a second."""
    stream = open_stream(subscribed("rita", warehouse, rep_notice), warehouse)
    started = time.monotonic()
    notify(warehouse)
    stream.until("notification")
    assert time.monotonic() - started < 1.0


def test_a_replay_is_not_cut_short_by_other_teams_claims(
    open_stream, subscribed, make_user, warehouse, rep_notice
):
    """Issue 19 A: 450 claims by another role, then one notification for rita, then rita
    reconnects from before them all: her notification is replayed before `ready`."""
    rita = subscribed("rita", warehouse, rep_notice)
    others = Group.objects.create(name="Others")
    olga = make_user("olga", others)
    other = MessageType.objects.create(code="OTHER", name="other", default_ttl_seconds=3600)
    Subscription.objects.create(message_type=other, warehouse=warehouse, role=others)
    start = notify(warehouse, "before")
    for i in range(450):
        theirs = publish(message_type="OTHER", warehouse=warehouse, title=f"o{i}")
        lifecycle.claim(user=olga, warehouse_id=warehouse.pk, notification_id=theirs.id)
    missed = notify(warehouse, "missed")

    stream = open_stream(rita, warehouse, last_event_id=start.cursor)

    assert [json.loads(e.data)["id"] for e in stream.replayed] == [missed.id]


def test_a_cursor_it_cannot_replay_gets_reset_then_ready(
    stream_client, token_for, subscribed, warehouse, rep_notice, settings
):
    rita = subscribed("rita", warehouse, rep_notice)
    notify(warehouse)
    with stream_client.stream(
        "GET",
        "/api/v1/stream/",
        params={"warehouse": warehouse.pk},
        headers={**token_for(rita), "Last-Event-ID": "1"},  # long before the look-back
    ) as response:
        from tests.stream.conftest import EventStream

        stream = EventStream(response)
        first = stream.next()
        assert first is not None
        assert (first.event, first.data) == ("reset", "{}")
        ready = stream.next()
        assert ready is not None
        assert ready.event == "ready"


def test_the_cursor_of_a_live_notification_is_always_replayable(
    open_stream, subscribed, warehouse, rep_notice, settings, clock
):
    from notifications.domain import InboxPage
    from stream.app import replayable

    subscribed("rita", warehouse, rep_notice)
    old = notify(warehouse, "old", ttl_seconds=10 * 24 * 3600)
    clock.move_by(5 * 24 * 3600 * 1000)  # past the look-back; the notification still lives
    later = notify(warehouse, "later")
    page = InboxPage(items=[], unread_count=0, next_since=0, oldest=old.cursor)
    assert replayable(old.cursor, page)
    assert not replayable(old.cursor - 1, page)
    assert later.cursor > old.cursor


def test_stream_lifetimes_are_jittered(settings):
    from stream.app import lifetime

    settings.STREAM_MAX_SECONDS = 1000
    settings.STREAM_LIFETIME_JITTER = 0.2
    lifetimes = {lifetime() for _ in range(50)}
    assert all(800 <= s <= 1000 for s in lifetimes)
    assert len(lifetimes) > 1


@pytest.mark.parametrize("credentials", ["session", "token"])
def test_opening_a_stream_queries_no_database_in_steady_state(
    stream_client,
    session_cookie_for,
    token_for,
    subscribed,
    warehouse,
    rep_notice,
    monkeypatch,
    credentials,
):
    """Issue 22: after a deploy every operator reconnects at once; an open reads the session
    from Redis and the token, user, roles and warehouse from the directory."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from stream import access

    rita = subscribed("rita", warehouse, rep_notice)
    if credentials == "session":
        stream_client.cookies.update(session_cookie_for(rita))
        headers: dict[str, str] = {}
    else:
        headers = token_for(rita)
    queries: list[int] = []
    identify = access.identify

    def counted(*args):
        with CaptureQueriesContext(connection) as captured:  # in the worker thread it runs in
            found = identify(*args)
        queries.append(len(captured))
        return found

    monkeypatch.setattr(access, "identify", counted)
    for _ in range(2):  # the first fills the directory
        with stream_client.stream(
            "GET", "/api/v1/stream/", params={"warehouse": warehouse.pk}, headers=headers
        ) as r:
            assert r.status_code == 200
            from tests.stream.conftest import EventStream

            assert EventStream(r).until("ready").event == "ready"
    assert queries[0] > 0  # the count sees the worker thread's queries: the first filled it
    if credentials == "session":
        assert queries[1:] == [0]
    else:  # a token the directory holds is let in without the worker thread at all
        assert queries[1:] == []


def _open(stream_client, warehouse, headers) -> int:
    """Open a stream; the status, and for a 200 only once `ready` has arrived."""
    from tests.stream.conftest import EventStream

    with stream_client.stream(
        "GET", "/api/v1/stream/", params={"warehouse": warehouse.pk}, headers=headers
    ) as answer:
        if answer.status_code == 200:
            assert EventStream(answer).until("ready").event == "ready"
        return answer.status_code


@pytest.fixture
def worker_calls(monkeypatch) -> list[str]:
    """The names of the functions the stream runs in a worker thread, as it runs them."""
    from stream import access

    calls: list[str] = []
    run_db = access.run_db

    async def counted(function, *args):
        calls.append(function.__name__)
        return await run_db(function, *args)

    monkeypatch.setattr(access, "run_db", counted)
    return calls


def _open_at_once(asgi_server, warehouse, each_headers: list[dict[str, str]]) -> list[int]:
    """Open one stream per headers all at once (as after a deploy), each until `ready`; their
    status codes, in order."""
    import asyncio

    async def open_one(client: httpx.AsyncClient, headers: dict[str, str]) -> int:
        params = {"warehouse": warehouse.pk}
        async with client.stream("GET", "/api/v1/stream/", params=params, headers=headers) as r:
            if r.status_code == 200:
                async for line in r.aiter_lines():
                    if line == "event: ready":
                        break
            return r.status_code

    async def burst() -> list[int]:
        async with httpx.AsyncClient(base_url=asgi_server, timeout=10.0) as client:
            return await asyncio.gather(*(open_one(client, h) for h in each_headers))

    return asyncio.run(burst())


def test_a_burst_of_browsers_opens_together_and_a_signed_out_one_is_refused(
    asgi_server, make_user, warehouse, session_cookie_for, worker_calls
):
    """Browsers' streams (session cookies) after a deploy: authenticated together, their
    sessions read in one round trip; a session signed out meanwhile gets 403."""

    from django.conf import settings as django_settings
    from django.contrib.sessions.backends.base import SessionBase
    from django.utils.module_loading import import_string

    name = django_settings.SESSION_COOKIE_NAME
    cookies = [session_cookie_for(make_user(f"op{i}"))[name] for i in range(12)]
    store: SessionBase = import_string(f"{django_settings.SESSION_ENGINE}.SessionStore")(
        cookies[-1]
    )
    store.delete()

    opened = _open_at_once(asgi_server, warehouse, [{"Cookie": f"{name}={c}"} for c in cookies])
    assert opened == [200] * 11 + [403]
    assert 1 <= worker_calls.count("identify_all") < 8, worker_calls


def test_a_held_token_opens_without_a_worker_thread_and_changes_count_at_once(
    stream_client, token_for, subscribed, warehouse, rep_notice, worker_calls
):
    """Issue 22: a token the directory holds opens in one Redis round trip on the event loop;
    a change of the directory since sends the next open the usual way, which sees it."""
    rita = subscribed("rita", warehouse, rep_notice)
    headers = token_for(rita)

    def opens() -> list[str]:
        # The access watcher's own re-checks (recheck_all) run in a thread too, on its clock.
        return [call for call in worker_calls if call != "recheck_all"]

    assert _open(stream_client, warehouse, headers) == 200
    assert opens() == ["identify_all"]  # the first fills the directory
    assert _open(stream_client, warehouse, headers) == 200
    assert opens() == ["identify_all"]

    rita.groups.clear()  # any change of the directory: the next open asks again
    assert _open(stream_client, warehouse, headers) == 200
    assert opens() == ["identify_all", "identify_all"]

    warehouse.is_active = False
    warehouse.save()
    assert _open(stream_client, warehouse, headers) == 404
    warehouse.is_active = True
    warehouse.save()
    assert _open(stream_client, warehouse, headers) == 200

    rita.auth_token.delete()
    assert _open(stream_client, warehouse, headers) == 403


def test_a_token_deleted_while_a_held_open_is_under_way_is_refused(
    stream_client, token_for, subscribed, warehouse, rep_notice, monkeypatch
):
    """The held answer is confirmed by the directory's version read with the cursor: a token
    deleted between the look-up and that read is refused, not let in."""
    from stream import access

    rita = subscribed("rita", warehouse, rep_notice)
    headers = token_for(rita)
    assert _open(stream_client, warehouse, headers) == 200
    held = access.held_token_access
    seen = []

    def then_deleted(*args):
        found = held(*args)
        seen.append(found is not None)
        if found is not None:  # deleted (by another thread: this is the event loop) now
            deleting = threading.Thread(target=Token.objects.filter(user=rita).delete)
            deleting.start()
            deleting.join()
        return found

    monkeypatch.setattr(access, "held_token_access", then_deleted)
    assert _open(stream_client, warehouse, headers) == 403
    assert seen == [True]


def test_the_retry_interval_comes_with_the_first_event(
    stream_client, token_for, alice, warehouse, settings
):
    """SPEC 8: the client's reconnect delay is set before any event (here in the same write)."""
    with stream_client.stream(
        "GET", "/api/v1/stream/", params={"warehouse": warehouse.pk}, headers=token_for(alice)
    ) as answer:
        seen = b""
        for chunk in answer.iter_raw():
            seen += chunk
            if b"event: ready" in seen:
                break
    assert seen.startswith(b"retry: %d\n" % settings.STREAM_RETRY_MS)


def test_a_burst_of_opens_is_authenticated_together(
    asgi_server, make_user, warehouse, worker_calls
):
    """After a deploy (or any change of the directory) every stream opens at once: they share
    worker-thread calls, and each still gets its own answer (a bad token its 403)."""

    from directory.cache import bump

    users = [make_user(f"op{i}") for i in range(20)]
    tokens = [f"Token {Token.objects.create(user=u).key}" for u in users] + ["Token nope"]
    bump()

    opened = _open_at_once(asgi_server, warehouse, [{"Authorization": t} for t in tokens])
    assert opened == [200] * 20 + [403]
    batches = worker_calls.count("identify_all")  # (the open streams' re-check may run too)
    assert 1 <= batches < 10, worker_calls  # 21 opens, a few batches


def test_a_stream_ends_at_its_recheck_once_its_session_is_gone(
    stream_client, session_cookie_for, subscribed, warehouse, rep_notice, settings
):
    """A session's logout or expiry is seen by the stream's own periodic re-check
    (STREAM_RECHECK_SECONDS), taken with the other streams' re-checks due then."""
    from django.contrib.sessions.backends.base import SessionBase
    from django.utils.module_loading import import_string

    from tests.stream.conftest import EventStream

    settings.STREAM_RECHECK_SECONDS = 0.2
    settings.STREAM_HEARTBEAT_SECONDS = 0.1
    rita = subscribed("rita", warehouse, rep_notice)
    cookies = session_cookie_for(rita)
    stream_client.cookies.update(cookies)
    with stream_client.stream("GET", "/api/v1/stream/", params={"warehouse": warehouse.pk}) as r:
        assert r.status_code == 200
        stream = EventStream(r)
        stream.until("ready")
        assert stream.next(comments=True) is not None  # alive: heartbeats while nothing happens
        store: SessionBase = import_string(f"{settings.SESSION_ENGINE}.SessionStore")(
            cookies[settings.SESSION_COOKIE_NAME]
        )
        store.delete()  # logged out
        for _ in range(100):  # re-checks every 0.2 s: it ends long before 100 heartbeats
            event = stream.next(comments=True)
            if event is None:
                break
            assert event.comment  # nothing but heartbeats until it ends
        else:
            raise AssertionError("the stream outlived its session")
