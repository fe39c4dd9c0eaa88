"""The lifecycle endpoints: claim, release, resolve, history (SPEC section 7) over HTTP."""

import re
import uuid

import pytest

from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user, client_for):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return {name: client_for(make_user(name, role)) for name in ("rita", "ralf")}


def post(client, note_id, action, warehouse, **extra):
    return client.post(
        f"/api/v1/notifications/{note_id}/{action}/",
        {"warehouse": warehouse.pk},
        format="json",
        **extra,
    )


def test_claim_then_the_colleague_sees_it_claimed_and_gets_409(crew, warehouse, send):
    note = send()
    rita, ralf = crew["rita"], crew["ralf"]
    start = ralf.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()

    claimed = post(rita, note.id, "claim", warehouse)
    again = post(rita, note.id, "claim", warehouse)
    conflict = post(ralf, note.id, "claim", warehouse)
    badge = ralf.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).json()
    followed = ralf.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk, "since": start["next_since"]}
    ).json()

    assert claimed.status_code == 200
    assert again.status_code == 200
    body = claimed.json()
    assert body["status"] == "claimed"
    assert body["read"] is True
    assert body["claimed_by"]["username"] == "rita"
    assert isinstance(body["claimed_by"]["id"], int)
    assert ISO_MS.match(body["claimed_at"])
    assert body["cursor"] > start["next_since"]
    assert conflict.status_code == 409
    assert conflict.json() == {
        "detail": "Already claimed by rita.",
        "claimed_by": body["claimed_by"],
    }
    assert (badge["unread_count"], badge["latest"]) == (0, [])
    assert [(n["id"], n["status"], n["cursor"]) for n in followed["results"]] == [
        (note.id, "claimed", body["cursor"])
    ]


def test_release_by_someone_else_is_403_and_resolve_is_idempotent(crew, warehouse, send):
    note = send()
    rita, ralf = crew["rita"], crew["ralf"]
    post(rita, note.id, "claim", warehouse)

    forbidden = post(ralf, note.id, "release", warehouse)
    released = post(rita, note.id, "release", warehouse)
    resolved = post(ralf, note.id, "resolve", warehouse)
    resolved_again = post(rita, note.id, "resolve", warehouse)
    claim_resolved = post(rita, note.id, "claim", warehouse)

    assert forbidden.status_code == 403
    assert "rita" in forbidden.json()["detail"]
    assert released.status_code == 200
    assert released.json()["status"] == "open"
    assert released.json()["claimed_by"] is None
    assert resolved.status_code == 200
    assert resolved_again.status_code == 200
    assert resolved_again.json()["resolved_by"]["username"] == "ralf"
    assert ISO_MS.match(resolved_again.json()["resolved_at"])
    assert claim_resolved.status_code == 409
    assert "resolved" in claim_resolved.json()["detail"]


def test_404_when_the_user_cannot_see_it(crew, warehouse, other_warehouse, send, alice, client_for):
    note = send()
    outsider = client_for(alice)

    for action in ("claim", "release", "resolve"):
        assert post(outsider, note.id, action, warehouse).status_code == 404
        assert post(crew["rita"], note.id, action, other_warehouse).status_code == 404
        assert post(crew["rita"], uuid.uuid4(), action, warehouse).status_code == 404
    history = outsider.get(f"/api/v1/notifications/{note.id}/history/", {"warehouse": warehouse.pk})
    assert history.status_code == 404
    assert post(crew["rita"], "not-a-uuid", "claim", warehouse).status_code == 404
    missing_warehouse = crew["rita"].post(
        f"/api/v1/notifications/{note.id}/claim/", {}, format="json"
    )
    assert missing_warehouse.status_code == 400


def test_history_endpoint(crew, warehouse, send):
    note = send()
    post(crew["rita"], note.id, "claim", warehouse)
    post(crew["rita"], note.id, "resolve", warehouse)

    body = (
        crew["ralf"]
        .get(f"/api/v1/notifications/{note.id}/history/", {"warehouse": warehouse.pk})
        .json()
    )

    assert [(e["event"], e["by"] and e["by"]["username"]) for e in body["results"]] == [
        ("published", None),
        ("claimed", "rita"),
        ("resolved", "rita"),
    ]
    assert all(ISO_MS.match(e["at"]) for e in body["results"])


def test_claim_answers_xml_on_request(crew, warehouse, send):
    note = send()

    response = post(crew["rita"], note.id, "claim", warehouse, HTTP_ACCEPT="application/xml")

    assert response.status_code == 200
    text = response.content.decode()
    assert "<status>claimed</status>" in text
    assert "<username>rita</username>" in text


def test_claim_with_redis_down_gives_503(crew, warehouse, redis_down):
    response = post(crew["rita"], uuid.uuid4(), "claim", warehouse)

    assert response.status_code == 503
    assert response["Retry-After"].isdigit()
