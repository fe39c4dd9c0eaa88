"""Every chat endpoint through HTTP: SPEC.md's shapes, status codes and errors."""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from config import timestamps
from messaging import keys

pytestmark = pytest.mark.django_db

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def chat_url(chat_id: str, action: str = "") -> str:
    return f"/api/v1/chats/{chat_id}/" + (f"{action}/" if action else "")


def assert_user(data, user):
    assert data == {"id": user.pk, "username": user.username}


def assert_message_shape(data, *, chat_id, sender, body, id):
    assert set(data) == {"id", "chat", "sender", "body", "sent_at"}
    assert data["id"] == id
    assert data["chat"] == chat_id
    assert_user(data["sender"], sender)
    assert data["body"] == body
    assert TIMESTAMP.fullmatch(data["sent_at"]), data["sent_at"]


def assert_chat_shape(data):
    assert set(data) == {"id", "kind", "members", "unread", "last_message"}
    assert isinstance(data["id"], str)
    assert data["kind"] in {"group", "direct"}
    assert all(set(m) == {"id", "username"} for m in data["members"])
    assert isinstance(data["unread"], int)


# --- POST /chats/ -------------------------------------------------------------------------


def test_create_group_chat(alice, bob, carol, client_for):
    response = client_for(alice).post(
        "/api/v1/chats/",
        {"members": [bob.pk, carol.pk], "message": "Wave 8812 is late"},
        format="json",
    )
    assert response.status_code == 201
    chat = response.json()
    assert_chat_shape(chat)
    assert chat["id"].startswith("g-")
    assert chat["kind"] == "group"
    assert [m["username"] for m in chat["members"]] == ["alice", "bob", "carol"]
    assert chat["unread"] == 0  # the creator has seen their own first message
    assert_message_shape(
        chat["last_message"], chat_id=chat["id"], sender=alice, body="Wave 8812 is late", id=1
    )

    bobs_view = client_for(bob).get(chat_url(chat["id"])).json()
    assert bobs_view["unread"] == 1
    assert bobs_view["last_message"]["id"] == 1


def test_creator_listed_among_members_is_counted_once(alice, bob, client_for):
    chat = (
        client_for(alice)
        .post(
            "/api/v1/chats/",
            {"members": [bob.pk, alice.pk, bob.pk], "message": "hi"},
            format="json",
        )
        .json()
    )
    assert [m["id"] for m in chat["members"]] == [alice.pk, bob.pk]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"message": "hi"}, "members"),
        ({"members": [], "message": "hi"}, "members"),
        ({"members": "2", "message": "hi"}, "members"),
        ({"members": ["x"], "message": "hi"}, "members"),
        ({"members": [0], "message": "hi"}, "members"),
        ({"members": [2**70], "message": "hi"}, "members"),
        ({"members": ["BOB"]}, "message"),
        ({"members": ["BOB"], "message": ""}, "message"),
        ({"members": ["BOB"], "message": " \n\t "}, "message"),
        ({"members": ["BOB"], "message": "x" * 4001}, "message"),
        ({"members": [987654], "message": "hi"}, "members"),  # no such user
        ({"members": ["INACTIVE"], "message": "hi"}, "members"),
        ({"members": ["ME"], "message": "hi"}, "members"),  # nobody but me
    ],
)
def test_create_group_chat_refuses_bad_input_and_writes_nothing(
    alice, bob, make_user, client_for, redis, payload, field
):
    inactive = make_user("ghost", is_active=False)
    names = {"BOB": bob.pk, "INACTIVE": inactive.pk, "ME": alice.pk}
    if isinstance(payload.get("members"), list):
        payload = {**payload, "members": [names.get(m, m) for m in payload["members"]]}
    response = client_for(alice).post("/api/v1/chats/", payload, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert redis.dbsize() == 0


def test_group_chat_member_limit(alice, make_user, client_for, settings, redis):
    settings.CHAT_MAX_MEMBERS = 3
    others = [make_user(f"op{i}").pk for i in range(3)]
    response = client_for(alice).post(
        "/api/v1/chats/", {"members": others, "message": "hi"}, format="json"
    )
    assert response.status_code == 400
    assert "at most 3 members" in response.json()["members"][0]
    assert redis.dbsize() == 0
    ok = client_for(alice).post(
        "/api/v1/chats/", {"members": others[:2], "message": "hi"}, format="json"
    )
    assert ok.status_code == 201


def test_a_message_of_exactly_the_limit_is_accepted(alice, bob, client_for):
    body = "货" * settings.CHAT_MESSAGE_MAX_LENGTH  # characters, not bytes
    response = client_for(alice).post(
        "/api/v1/chats/", {"members": [bob.pk], "message": body}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["last_message"]["body"] == body


# --- GET /chats/ ----------------------------------------------------------------------------


def test_my_chats_most_recent_activity_first(
    alice, bob, carol, client_for, group, send, monkeypatch
):
    ticks = iter(range(1_800_000_000_000, 1_900_000_000_000, 1000))
    monkeypatch.setattr(timestamps, "now_ms", lambda: next(ticks))
    first = group(alice, bob)
    second = group(alice, carol)
    direct = client_for(alice).post("/api/v1/chats/direct/", {"user": bob.pk}, format="json").json()
    send(bob, first, "bump")

    listing = client_for(alice).get("/api/v1/chats/").json()
    assert set(listing) == {"results"}
    assert [c["id"] for c in listing["results"]] == [first.id, direct["id"], second.id]
    for chat in listing["results"]:
        assert_chat_shape(chat)
    assert [c["unread"] for c in listing["results"]] == [1, 0, 0]

    assert [c["id"] for c in client_for(carol).get("/api/v1/chats/").json()["results"]] == [
        second.id
    ]


def test_no_chats_is_an_empty_list(alice, client_for):
    assert client_for(alice).get("/api/v1/chats/").json() == {"results": []}


# --- POST /chats/direct/ -------------------------------------------------------------------


def test_direct_chat_has_the_same_id_whoever_opens_it(alice, bob, client_for):
    opened = client_for(alice).post("/api/v1/chats/direct/", {"user": bob.pk}, format="json")
    assert opened.status_code == 200
    chat = opened.json()
    assert_chat_shape(chat)
    assert chat["id"] == keys.direct_chat_id(alice.pk, bob.pk)
    assert chat["kind"] == "direct"
    assert chat["last_message"] is None
    assert [m["id"] for m in chat["members"]] == [alice.pk, bob.pk]

    again = client_for(bob).post("/api/v1/chats/direct/", {"user": alice.pk}, format="json")
    assert again.json()["id"] == chat["id"]


def test_direct_chat_unread_counts(alice, bob, client_for):
    a, b = client_for(alice), client_for(bob)
    chat_id = a.post("/api/v1/chats/direct/", {"user": bob.pk}, format="json").json()["id"]
    for body in ("one", "two", "three"):
        assert (
            a.post(chat_url(chat_id, "messages"), {"body": body}, format="json").status_code == 201
        )
    assert b.get(chat_url(chat_id)).json()["unread"] == 3
    assert a.get(chat_url(chat_id)).json()["unread"] == 0
    # Opening it again changes nothing.
    assert b.post("/api/v1/chats/direct/", {"user": alice.pk}, format="json").json()["unread"] == 3
    assert b.post(chat_url(chat_id, "read"), {"up_to": 2}, format="json").json() == {"unread": 1}
    assert b.get(chat_url(chat_id)).json()["unread"] == 1


@pytest.mark.parametrize("who", ["me", "nobody", "inactive", "text", "missing"])
def test_direct_chat_refuses_bad_partners(alice, make_user, client_for, redis, who):
    inactive = make_user("ghost", is_active=False)
    payload = {
        "me": {"user": alice.pk},
        "nobody": {"user": 987654},
        "inactive": {"user": inactive.pk},
        "text": {"user": "bob"},
        "missing": {},
    }[who]
    response = client_for(alice).post("/api/v1/chats/direct/", payload, format="json")
    assert response.status_code == 400
    assert "user" in response.json()
    assert redis.dbsize() == 0


# --- GET /chats/<id>/ ------------------------------------------------------------------------


@pytest.mark.parametrize("chat_id", ["d-1-2", "g-0123456789abcdef", "nonsense", "d-2-1"])
def test_unknown_chat_is_404(alice, client_for, chat_id):
    for action in ("", "messages"):
        response = client_for(alice).get(chat_url(chat_id, action))
        assert response.status_code == 404
        assert response.json() == {"detail": "No such chat."}


def test_non_members_get_404_for_everything_about_a_chat(
    alice, bob, carol, dave, client_for, group, stored_ids
):
    chat = group(alice, bob, carol)
    d = client_for(dave)
    responses = [
        d.get(chat_url(chat.id)),
        d.get(chat_url(chat.id, "messages")),
        d.post(chat_url(chat.id, "messages"), {"body": "let me in"}, format="json"),
        d.post(chat_url(chat.id, "read"), {"up_to": 1}, format="json"),
        d.post(chat_url(chat.id, "members"), {"user": dave.pk}, format="json"),
        d.post(chat_url(chat.id, "leave")),
    ]
    assert [r.status_code for r in responses] == [404] * len(responses)
    # Exactly what an unknown chat answers: nothing tells them it exists.
    assert {r.json()["detail"] for r in responses} == {"No such chat."}
    assert stored_ids(chat.id) == [1]
    assert d.get("/api/v1/chats/").json() == {"results": []}
    assert d.get("/api/v1/chats/pending/").json() == {"results": []}


# --- /chats/<id>/messages/ ------------------------------------------------------------------


def test_send_and_list_messages(alice, bob, carol, client_for, group):
    chat = group(alice, bob, carol)
    b = client_for(bob)
    sent = b.post(chat_url(chat.id, "messages"), {"body": "  on my way\n"}, format="json")
    assert sent.status_code == 201
    assert_message_shape(sent.json(), chat_id=chat.id, sender=bob, body="  on my way\n", id=2)
    # Text comes back exactly as sent: no escaping, no trimming, any Unicode.
    odd = '补货 🚚 <b>"A-01/03"</b> \\ \u2028 \t end'
    assert b.post(chat_url(chat.id, "messages"), {"body": odd}, format="json").json()["body"] == odd

    listing = client_for(carol).get(chat_url(chat.id, "messages"))
    assert listing.status_code == 200
    results = listing.json()["results"]
    assert [m["id"] for m in results] == [1, 2, 3]
    assert_message_shape(results[0], chat_id=chat.id, sender=alice, body="hello", id=1)
    assert_message_shape(results[1], chat_id=chat.id, sender=bob, body="  on my way\n", id=2)
    assert results[2]["body"] == odd


def test_listing_messages_pages_with_after_and_limit_and_does_not_mark_seen(
    alice, bob, client_for, group, send
):
    chat = group(alice, bob)
    send(alice, chat, *[f"m{i}" for i in range(2, 8)])
    b = client_for(bob)
    page = b.get(chat_url(chat.id, "messages"), {"after": 2, "limit": 3}).json()["results"]
    assert [m["id"] for m in page] == [3, 4, 5]
    rest = b.get(chat_url(chat.id, "messages"), {"after": 5}).json()["results"]
    assert [m["id"] for m in rest] == [6, 7]
    assert b.get(chat_url(chat.id, "messages"), {"after": 7}).json() == {"results": []}
    assert b.get(chat_url(chat.id)).json()["unread"] == 7


@pytest.mark.parametrize(
    "params",
    [
        {"after": -1},
        {"after": "x"},
        {"limit": 0},
        {"limit": 201},
        {"limit": "lots"},
    ],
)
def test_listing_messages_refuses_bad_parameters(alice, bob, client_for, group, params):
    chat = group(alice, bob)
    response = client_for(alice).get(chat_url(chat.id, "messages"), params)
    assert response.status_code == 400
    assert set(response.json()) <= {"after", "limit"}


@pytest.mark.parametrize(
    "payload", [{}, {"body": ""}, {"body": "   "}, {"body": "x" * 4001}, {"body": None}]
)
def test_send_refuses_bad_bodies_and_writes_nothing(
    alice, bob, client_for, group, payload, stored_ids, redis
):
    chat = group(alice, bob)
    before = redis.get(keys.sequence(chat.id))
    response = client_for(alice).post(chat_url(chat.id, "messages"), payload, format="json")
    assert response.status_code == 400
    assert "body" in response.json()
    assert stored_ids(chat.id) == [1]
    assert redis.get(keys.sequence(chat.id)) == before


def test_send_refuses_text_that_is_not_unicode(alice, bob, client_for, group, stored_ids):
    chat = group(alice, bob)
    # Valid JSON, but a lone surrogate is no character: it cannot be stored as UTF-8.
    response = client_for(alice).post(
        chat_url(chat.id, "messages"),
        data='{"body": "broken \\ud800 text"}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "body" in response.json()
    assert stored_ids(chat.id) == [1]


def test_body_limit_comes_from_settings(alice, bob, client_for, group, settings):
    settings.CHAT_MESSAGE_MAX_LENGTH = 10
    chat = group(alice, bob, message="short")
    c = client_for(alice)
    assert (
        c.post(chat_url(chat.id, "messages"), {"body": "x" * 10}, format="json").status_code == 201
    )
    response = c.post(chat_url(chat.id, "messages"), {"body": "x" * 11}, format="json")
    assert response.status_code == 400
    assert "at most 10 characters" in response.json()["body"][0]


def test_sending_to_a_chat_you_left_is_refused(alice, bob, carol, client_for, group, stored_ids):
    chat = group(alice, bob, carol)
    b = client_for(bob)
    assert b.post(chat_url(chat.id, "leave")).status_code == 204
    response = b.post(chat_url(chat.id, "messages"), {"body": "still here?"}, format="json")
    assert response.status_code == 404
    assert 2 not in stored_ids(chat.id)


# --- POST /chats/<id>/read/ ------------------------------------------------------------------


def test_read_up_to(alice, bob, client_for, group, send):
    chat = group(alice, bob)
    send(alice, chat, "2", "3", "4")
    b = client_for(bob)
    assert b.post(chat_url(chat.id, "read"), {"up_to": 3}, format="json").json() == {"unread": 1}
    # Never backwards, and idempotent.
    assert b.post(chat_url(chat.id, "read"), {"up_to": 1}, format="json").json() == {"unread": 1}
    assert b.post(chat_url(chat.id, "read"), {"up_to": 4}, format="json").json() == {"unread": 0}
    assert b.get(chat_url(chat.id)).json()["unread"] == 0


@pytest.mark.parametrize("payload", [{}, {"up_to": -1}, {"up_to": "x"}, {"up_to": 99}])
def test_read_refuses_bad_up_to(alice, bob, client_for, group, payload):
    chat = group(alice, bob)
    response = client_for(bob).post(chat_url(chat.id, "read"), payload, format="json")
    assert response.status_code == 400
    assert "up_to" in response.json()
    assert client_for(bob).get(chat_url(chat.id)).json()["unread"] == 1


# --- GET /chats/pending/ ------------------------------------------------------------------------


def test_pending_returns_every_unseen_message_once(alice, bob, carol, client_for, group, send):
    first = group(alice, bob, carol)
    second = group(carol, bob, message="second chat")
    send(alice, first, "more")
    quiet = group(alice, carol)  # bob is not in it

    b = client_for(bob)
    pending = b.get("/api/v1/chats/pending/")
    assert pending.status_code == 200
    by_chat = {p["chat"]: p["messages"] for p in pending.json()["results"]}
    assert set(by_chat) == {first.id, second.id}
    assert quiet.id not in by_chat
    assert [m["id"] for m in by_chat[first.id]] == [1, 2]
    assert_message_shape(
        by_chat[second.id][0], chat_id=second.id, sender=carol, body="second chat", id=1
    )
    assert all(set(p) == {"chat", "messages"} for p in pending.json()["results"])

    assert b.get("/api/v1/chats/pending/").json() == {"results": []}
    assert b.get(chat_url(first.id)).json()["unread"] == 0
    send(carol, first, "new")
    again = b.get("/api/v1/chats/pending/").json()["results"]
    assert [(p["chat"], [m["body"] for m in p["messages"]]) for p in again] == [(first.id, ["new"])]


# --- POST /chats/<id>/members/ --------------------------------------------------------------


def test_add_member_sees_only_later_messages(alice, bob, carol, client_for, group, send):
    chat = group(alice, bob)
    send(bob, chat, "before carol")
    added = client_for(alice).post(chat_url(chat.id, "members"), {"user": carol.pk}, format="json")
    assert added.status_code == 200
    assert_chat_shape(added.json())
    assert [m["username"] for m in added.json()["members"]] == ["alice", "bob", "carol"]

    c = client_for(carol)
    mine = c.get(chat_url(chat.id)).json()
    assert mine["unread"] == 0
    assert mine["last_message"] is None  # not even a preview of what came before
    assert c.get(chat_url(chat.id, "messages")).json() == {"results": []}
    assert c.get("/api/v1/chats/pending/").json() == {"results": []}

    send(bob, chat, "welcome carol")
    assert [m["body"] for m in c.get(chat_url(chat.id, "messages")).json()["results"]] == [
        "welcome carol"
    ]
    assert c.get(chat_url(chat.id)).json()["last_message"]["body"] == "welcome carol"
    assert c.get(chat_url(chat.id)).json()["unread"] == 1
    assert [c_["id"] for c_ in c.get("/api/v1/chats/").json()["results"]] == [chat.id]


def test_adding_an_existing_member_changes_nothing(alice, bob, client_for, group):
    chat = group(alice, bob)
    before = client_for(bob).get(chat_url(chat.id)).json()
    again = client_for(alice).post(chat_url(chat.id, "members"), {"user": bob.pk}, format="json")
    assert again.status_code == 200
    assert [m["id"] for m in again.json()["members"]] == [alice.pk, bob.pk]
    assert client_for(bob).get(chat_url(chat.id)).json() == before  # still 1 unread


@pytest.mark.parametrize("who", ["nobody", "inactive", "missing", "text"])
def test_add_member_refuses_unknown_or_inactive_users(
    alice, bob, make_user, client_for, group, who
):
    chat = group(alice, bob)
    inactive = make_user("ghost", is_active=False)
    payload = {
        "nobody": {"user": 987654},
        "inactive": {"user": inactive.pk},
        "missing": {},
        "text": {"user": "ghost"},
    }[who]
    response = client_for(alice).post(chat_url(chat.id, "members"), payload, format="json")
    assert response.status_code == 400
    assert "user" in response.json()
    assert [m["id"] for m in client_for(alice).get(chat_url(chat.id)).json()["members"]] == [
        alice.pk,
        bob.pk,
    ]


def test_members_cannot_be_added_to_a_direct_chat(alice, bob, carol, client_for):
    a = client_for(alice)
    chat_id = a.post("/api/v1/chats/direct/", {"user": bob.pk}, format="json").json()["id"]
    response = a.post(chat_url(chat_id, "members"), {"user": carol.pk}, format="json")
    assert response.status_code == 400
    assert "group chats" in response.json()["user"][0]
    assert client_for(carol).get(chat_url(chat_id)).status_code == 404


def test_a_full_group_refuses_another_member(alice, bob, carol, client_for, group, settings):
    settings.CHAT_MAX_MEMBERS = 2
    chat = group(alice, bob)
    response = client_for(bob).post(chat_url(chat.id, "members"), {"user": carol.pk}, format="json")
    assert response.status_code == 400
    assert client_for(carol).get(chat_url(chat.id)).status_code == 404


# --- POST /chats/<id>/leave/ ------------------------------------------------------------------


def test_leave_twice(alice, bob, carol, client_for, group):
    chat = group(alice, bob, carol)
    b = client_for(bob)
    first = b.post(chat_url(chat.id, "leave"))
    assert first.status_code == 204
    assert first.content == b""
    assert b.post(chat_url(chat.id, "leave")).status_code == 404
    assert b.get(chat_url(chat.id)).status_code == 404
    assert b.get("/api/v1/chats/").json() == {"results": []}
    members = client_for(alice).get(chat_url(chat.id)).json()["members"]
    assert [m["username"] for m in members] == ["alice", "carol"]


def test_last_member_leaving_deletes_every_key_of_the_chat(
    alice, bob, client_for, group, send, chat_keys_in_redis, redis
):
    chat = group(alice, bob)
    send(bob, chat, "bye")
    assert chat_keys_in_redis(chat.id)
    assert client_for(alice).post(chat_url(chat.id, "leave")).status_code == 204
    assert chat_keys_in_redis(chat.id)
    assert client_for(bob).post(chat_url(chat.id, "leave")).status_code == 204
    assert chat_keys_in_redis(chat.id) == set()
    assert redis.zscore(keys.activity(), chat.id) is None
    for user in (alice, bob):
        assert redis.zscore(keys.user_chats(user.pk), chat.id) is None
    assert client_for(alice).get(chat_url(chat.id)).status_code == 404


def test_a_left_direct_chat_reopens_with_only_new_messages(alice, bob, client_for):
    a, b = client_for(alice), client_for(bob)
    chat_id = a.post("/api/v1/chats/direct/", {"user": bob.pk}, format="json").json()["id"]
    a.post(chat_url(chat_id, "messages"), {"body": "are you there"}, format="json")
    assert b.post(chat_url(chat_id, "leave")).status_code == 204
    a.post(chat_url(chat_id, "messages"), {"body": "while bob was away"}, format="json")

    reopened = b.post("/api/v1/chats/direct/", {"user": alice.pk}, format="json").json()
    assert reopened["id"] == chat_id
    assert reopened["unread"] == 0
    assert b.get(chat_url(chat_id, "messages")).json() == {"results": []}
    a.post(chat_url(chat_id, "messages"), {"body": "welcome back"}, format="json")
    assert [m["body"] for m in b.get(chat_url(chat_id, "messages")).json()["results"]] == [
        "welcome back"
    ]


# --- Authentication, outages, schema ---------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/chats/"),
        ("post", "/api/v1/chats/"),
        ("post", "/api/v1/chats/direct/"),
        ("get", "/api/v1/chats/pending/"),
        ("get", "/api/v1/chats/d-1-2/"),
        ("get", "/api/v1/chats/d-1-2/messages/"),
        ("post", "/api/v1/chats/d-1-2/messages/"),
        ("post", "/api/v1/chats/d-1-2/read/"),
        ("post", "/api/v1/chats/d-1-2/members/"),
        ("post", "/api/v1/chats/d-1-2/leave/"),
        ("get", "/api/v1/contacts/"),
    ],
)
def test_anonymous_clients_are_refused(api_client, method, url):
    assert getattr(api_client, method)(url).status_code in (401, 403)


def test_token_authentication(alice, bob, group, api_client):
    from rest_framework.authtoken.models import Token

    chat = group(alice, bob)
    token = Token.objects.create(user=bob)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api_client.get(chat_url(chat.id)).json()["unread"] == 1


@pytest.mark.parametrize(
    ("method", "url", "payload"),
    [
        ("get", "/api/v1/chats/", None),
        ("post", "/api/v1/chats/", {"members": ["BOB"], "message": "hi"}),
        ("post", "/api/v1/chats/direct/", {"user": "BOB"}),
        ("get", "/api/v1/chats/pending/", None),
        ("get", "/api/v1/chats/d-1-2/", None),
        ("get", "/api/v1/chats/d-1-2/messages/", None),
        ("post", "/api/v1/chats/d-1-2/messages/", {"body": "hi"}),
        ("post", "/api/v1/chats/d-1-2/read/", {"up_to": 1}),
        ("post", "/api/v1/chats/d-1-2/members/", {"user": "BOB"}),
        ("post", "/api/v1/chats/d-1-2/leave/", None),
        ("get", "/api/v1/contacts/", {"q": "b"}),
    ],
)
def test_redis_down_gives_503_with_retry_after(
    alice, bob, client_for, redis_down, method, url, payload
):
    if isinstance(payload, dict):
        payload = {k: (bob.pk if v == "BOB" else v) for k, v in payload.items()}
        if payload.get("members"):
            payload["members"] = [bob.pk]
    client = client_for(alice)
    if method == "get":
        response = client.get(url, payload)
    else:
        response = client.post(url, payload, format="json")
    assert response.status_code == 503
    assert response["Retry-After"] == str(settings.REDIS_RETRY_AFTER_SECONDS)
    assert "detail" in response.json()


def test_the_openapi_schema_describes_the_chat_endpoints(alice, client_for):
    response = client_for(alice).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/chats/",
        "/api/v1/chats/direct/",
        "/api/v1/chats/pending/",
        "/api/v1/chats/{chat_id}/",
        "/api/v1/chats/{chat_id}/messages/",
        "/api/v1/chats/{chat_id}/read/",
        "/api/v1/chats/{chat_id}/members/",
        "/api/v1/chats/{chat_id}/leave/",
        "/api/v1/contacts/",
    ):
        assert path in paths, path
    post = paths["/api/v1/chats/{chat_id}/messages/"]["post"]
    assert "201" in post["responses"]
    params = {p["name"] for p in paths["/api/v1/chats/{chat_id}/messages/"]["get"]["parameters"]}
    assert {"after", "limit"} <= params


@pytest.mark.parametrize("gone", ["deactivated", "deleted"])
def test_a_direct_chat_refuses_messages_to_a_partner_who_is_gone(alice, bob, client_for, gone):
    """Issue 20, row 3h: writing into a direct chat whose other member was deleted or
    deactivated is refused with a clear 409, and nothing is stored."""
    chat_id = client_for(alice).post("/api/v1/chats/direct/", {"user": bob.pk}, format="json")
    chat_id = chat_id.json()["id"]
    assert client_for(alice).post(chat_url(chat_id, "messages"), {"body": "hi"}).status_code == 201
    if gone == "deleted":
        bob.delete()
    else:
        bob.is_active = False
        bob.save()

    response = client_for(alice).post(chat_url(chat_id, "messages"), {"body": "still there?"})

    assert response.status_code == 409
    assert "deleted or deactivated" in response.json()["detail"]
    history = client_for(alice).get(chat_url(chat_id, "messages")).json()["results"]
    assert [m["body"] for m in history] == ["hi"]


def test_a_stranger_still_gets_404_for_a_direct_chat_with_a_gone_member(
    alice, bob, carol, client_for
):
    chat_id = client_for(alice).post("/api/v1/chats/direct/", {"user": bob.pk}, format="json")
    bob.is_active = False
    bob.save()

    response = client_for(carol).post(chat_url(chat_id.json()["id"], "messages"), {"body": "x"})

    assert response.status_code == 404
