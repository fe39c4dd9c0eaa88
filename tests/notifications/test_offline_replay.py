"""What the server answers when the page's offline queue sends a claim, release or resolve again
(SPEC 12: the first send arrived but its answer was lost, so the page replays it with the same
`Idempotency-Key`). Every replay is harmless: nothing happens twice, and nobody else's work is
undone."""

import uuid

import pytest

from tests.notifications.conftest import events_of

pytestmark = pytest.mark.django_db(transaction=True)


def send_twice(client, note_id, action, warehouse):
    """The page's send and its replay: the same action with the same Idempotency-Key."""
    key = str(uuid.uuid4())
    return [
        client.post(
            f"/api/v1/notifications/{note_id}/{action}/",
            {"warehouse": warehouse.pk},
            format="json",
            HTTP_IDEMPOTENCY_KEY=key,
        )
        for _ in range(2)
    ]


def test_a_replayed_claim_is_200_and_claims_once(crew, warehouse, send):
    users, clients = crew
    note = send()

    first, replay = send_twice(clients["rita"], note.id, "claim", warehouse)

    assert (first.status_code, replay.status_code) == (200, 200)
    assert first.json()["claimed_by"]["username"] == replay.json()["claimed_by"]["username"]
    assert replay.json()["status"] == "claimed"
    assert events_of(users["rita"], warehouse, note.id) == [
        ("published", None),
        ("claimed", "rita"),
    ]


def test_a_replayed_resolve_is_200_and_resolves_once(crew, warehouse, send):
    users, clients = crew
    note = send()

    first, replay = send_twice(clients["rita"], note.id, "resolve", warehouse)

    assert (first.status_code, replay.status_code) == (200, 200)
    assert replay.json()["resolved_at"] == first.json()["resolved_at"]
    assert [e for e, _ in events_of(users["rita"], warehouse, note.id)] == ["published", "resolved"]


def test_a_replayed_release_is_200_and_releases_once(crew, warehouse, send):
    users, clients = crew
    note = send()
    clients["rita"].post(
        f"/api/v1/notifications/{note.id}/claim/", {"warehouse": warehouse.pk}, format="json"
    )

    first, replay = send_twice(clients["rita"], note.id, "release", warehouse)

    assert (first.status_code, replay.status_code) == (200, 200)
    assert replay.json()["status"] == "open"
    assert [e for e, _ in events_of(users["rita"], warehouse, note.id)] == [
        "published",
        "claimed",
        "released",
    ]


def test_a_release_replayed_after_a_colleague_claimed_leaves_the_colleagues_claim(
    crew, warehouse, send
):
    """The release arrived, its answer was lost; ralf claimed it; the replay comes. ralf keeps
    it: the replay is answered with the release's own answer (SPEC 11), and the page's next
    poll shows ralf's claim."""
    users, clients = crew
    note = send()
    url = f"/api/v1/notifications/{note.id}/"
    clients["rita"].post(url + "claim/", {"warehouse": warehouse.pk}, format="json")
    key = str(uuid.uuid4())
    first = clients["rita"].post(
        url + "release/", {"warehouse": warehouse.pk}, format="json", HTTP_IDEMPOTENCY_KEY=key
    )
    clients["ralf"].post(url + "claim/", {"warehouse": warehouse.pk}, format="json")

    replay = clients["rita"].post(
        url + "release/", {"warehouse": warehouse.pk}, format="json", HTTP_IDEMPOTENCY_KEY=key
    )

    assert first.status_code == 200
    assert replay.status_code == 200
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    state = clients["ralf"].get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()
    assert state["results"] == [] or all(n["status"] == "claimed" for n in state["results"])
    assert events_of(users["ralf"], warehouse, note.id)[-1] == ("claimed", "ralf")


def test_a_chat_send_with_an_idempotency_key_is_accepted(client_for, make_user):
    """The page sends an Idempotency-Key with every chat message it may retry."""
    rita, ralf = make_user("rita"), make_user("ralf")
    client = client_for(rita)
    chat = client.post("/api/v1/chats/direct/", {"user": ralf.pk}, format="json").json()

    sent = client.post(
        f"/api/v1/chats/{chat['id']}/messages/",
        {"body": "Bin A-01-03 is empty"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
    )

    assert sent.status_code == 201
    assert sent.json()["body"] == "Bin A-01-03 is empty"
