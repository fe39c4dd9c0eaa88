"""Recent contacts (the last 100 people I chatted with) and GET /api/v1/contacts/."""

from __future__ import annotations

import pytest

from messaging import keys, services

pytestmark = pytest.mark.django_db


def contacts(client, q: str | None = None) -> list[str]:
    response = client.get("/api/v1/contacts/", {} if q is None else {"q": q})
    assert response.status_code == 200
    return [c["username"] for c in response.json()["results"]]


@pytest.fixture
def people(make_user):
    return {
        name: make_user(name) for name in ("Bob", "bobby", "boris", "carl", "Cecile", "dora", "zoe")
    }


def test_recent_contacts_come_first_most_recent_first(alice, people, client_for):
    me = client_for(alice)
    assert contacts(me) == ["Bob", "bobby", "boris", "carl", "Cecile", "dora", "zoe"]

    services.chat_open_direct(user=alice, other_id=people["zoe"].pk)
    chat = services.chat_create_group(
        creator=alice, member_ids=[people["dora"].pk, people["carl"].pk], message="hi"
    )
    direct = services.chat_open_direct(user=alice, other_id=people["boris"].pk)
    services.message_send(user=alice, chat_id=direct.id, body="hi")
    assert contacts(me)[:4] == ["boris", "carl", "dora", "zoe"]
    services.message_send(user=alice, chat_id=chat.id, body="again")  # dora, carl to the front
    found = contacts(me)
    # Contacts touched by the same message have no order among themselves.
    assert set(found[:2]) == {"carl", "dora"}
    assert found[2:] == ["boris", "zoe", "Bob", "bobby", "Cecile"]
    response = me.get("/api/v1/contacts/").json()
    assert set(response) == {"results"}
    assert response["results"][2] == {"id": people["boris"].pk, "username": "boris"}


def test_prefix_is_case_insensitive_for_recent_and_other_users(alice, people, client_for):
    services.chat_open_direct(user=alice, other_id=people["boris"].pk)
    me = client_for(alice)
    assert contacts(me, "BO") == ["boris", "Bob", "bobby"]
    assert contacts(me, "c") == ["carl", "Cecile"]
    assert contacts(me, "  c ") == ["carl", "Cecile"]
    assert contacts(me, "x") == []
    assert contacts(me, "%") == []  # not a LIKE wildcard


def test_me_and_inactive_users_are_never_suggested(alice, make_user, client_for):
    ghost = make_user("alina", is_active=False)
    other = make_user("alfred")
    services.chat_open_direct(user=alice, other_id=other.pk)
    other.is_active = False
    other.save()
    assert contacts(client_for(alice), "al") == []
    assert ghost.pk not in [
        c["id"] for c in client_for(alice).get("/api/v1/contacts/").json()["results"]
    ]


def test_the_list_is_capped(alice, make_user, client_for, settings):
    settings.CHAT_CONTACTS_LIMIT = 3
    for i in range(5):
        make_user(f"op{i}")
    assert contacts(client_for(alice)) == ["op0", "op1", "op2"]


def test_only_the_last_100_contacts_are_remembered(alice, make_user, redis):
    people = [make_user(f"u{i:03}") for i in range(105)]
    for person in people:
        services.chat_open_direct(user=alice, other_id=person.pk)
    remembered = [int(c) for c in redis.lrange(keys.contacts(alice.pk), 0, -1)]
    assert remembered == [p.pk for p in reversed(people)][:100]
    # Once each, however often they come back.
    services.chat_open_direct(user=alice, other_id=people[50].pk)
    remembered = [int(c) for c in redis.lrange(keys.contacts(alice.pk), 0, -1)]
    assert remembered[0] == people[50].pk
    assert len(remembered) == len(set(remembered)) == 100


def test_query_too_long_is_refused(alice, client_for):
    response = client_for(alice).get("/api/v1/contacts/", {"q": "x" * 151})
    assert response.status_code == 400
    assert "q" in response.json()
