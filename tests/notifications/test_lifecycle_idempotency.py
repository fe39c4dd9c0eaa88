"""Claim, release and resolve with an Idempotency-Key (SPEC 12, with SPEC 11's semantics): the
page's offline queue sends an action again with the same key when its answer was lost. A repeat
by the same user answers what the first one answered, with `Idempotent-Replayed: true`, and
changes nothing; the same key for another action or alert is 422."""

import pytest

from notifications import selectors
from subscriptions.models import Subscription
from tests.notifications.conftest import events_of

pytestmark = pytest.mark.django_db(transaction=True)


def act(client, note_id, action, warehouse, key=None):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return client.post(
        f"/api/v1/notifications/{note_id}/{action}/",
        {"warehouse": warehouse.pk},
        format="json",
        **headers,
    )


def test_a_claim_replayed_after_a_release_answers_the_first_claim_and_claims_nothing(
    crew, warehouse, send
):
    users, clients = crew
    rita = clients["rita"]
    note = send()

    first = act(rita, note.id, "claim", warehouse, key="K")
    act(rita, note.id, "release", warehouse)
    replay = act(rita, note.id, "claim", warehouse, key="K")

    assert first.status_code == 200
    assert "Idempotent-Replayed" not in first
    assert replay.status_code == 200
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert events_of(users["rita"], warehouse, note.id) == [
        ("published", None),
        ("claimed", "rita"),
        ("released", "rita"),
    ]
    page = selectors.inbox_page(user=users["ralf"], warehouse_id=warehouse.pk)
    assert [i.lifecycle.status if i.lifecycle else "open" for i in page.items] == ["open"]


@pytest.mark.parametrize("action", ["release", "resolve"])
def test_a_replayed_release_or_resolve_answers_the_first_answer(crew, warehouse, send, action):
    users, clients = crew
    rita, ralf = clients["rita"], clients["ralf"]
    note = send()
    act(rita, note.id, "claim", warehouse)

    first = act(rita, note.id, action, warehouse, key="K")
    if action == "release":
        act(ralf, note.id, "claim", warehouse)  # ralf holds it now: a release again is 403
    replay = act(rita, note.id, action, warehouse, key="K")

    assert (first.status_code, replay.status_code) == (200, 200)
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert [e for e, _ in events_of(users["ralf"], warehouse, note.id)].count(action + "d") == 1


def test_a_refusal_is_replayed_as_the_same_refusal(crew, warehouse, send):
    """rita's claim came while ralf held it (409); ralf released since; her replay must not
    claim it: it answers the 409 she was given."""
    users, clients = crew
    rita, ralf = clients["rita"], clients["ralf"]
    note = send()
    act(ralf, note.id, "claim", warehouse)

    first = act(rita, note.id, "claim", warehouse, key="K")
    act(ralf, note.id, "release", warehouse)
    replay = act(rita, note.id, "claim", warehouse, key="K")

    assert (first.status_code, replay.status_code) == (409, 409)
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert events_of(users["rita"], warehouse, note.id)[-1] == ("released", "ralf")


def test_the_same_key_for_another_action_or_alert_is_422(crew, warehouse, send):
    users, clients = crew
    rita = clients["rita"]
    note, other = send(), send(title="Replenish B-02-01")
    assert act(rita, note.id, "claim", warehouse, key="K").status_code == 200

    another_alert = act(rita, other.id, "claim", warehouse, key="K")
    another_action = act(rita, note.id, "resolve", warehouse, key="K")

    assert (another_alert.status_code, another_action.status_code) == (422, 422)
    assert "Idempotent-Replayed" not in another_alert
    assert [e for e, _ in events_of(users["rita"], warehouse, other.id)] == ["published"]
    assert [e for e, _ in events_of(users["rita"], warehouse, note.id)] == ["published", "claimed"]


def test_a_key_is_the_users_own(crew, warehouse, send):
    _, clients = crew
    note = send()
    act(clients["rita"], note.id, "resolve", warehouse, key="K")
    act(clients["rita"], note.id, "resolve", warehouse, key="K")

    theirs = act(clients["ralf"], note.id, "claim", warehouse, key="K")

    assert theirs.status_code == 409  # done, not replayed: resolved already
    assert "Idempotent-Replayed" not in theirs


@pytest.mark.parametrize("key", ["", "k" * 256, "\u5e93\u5b58"])
def test_a_bad_key_is_400_and_changes_nothing(crew, warehouse, send, key):
    users, clients = crew
    note = send()

    answer = act(clients["rita"], note.id, "claim", warehouse, key=key)

    assert answer.status_code == 400
    assert "Idempotency-Key" in answer.json()
    assert [e for e, _ in events_of(users["rita"], warehouse, note.id)] == ["published"]


def test_a_keyed_claim_with_redis_down_is_503(crew, warehouse, redis_down):
    _, clients = crew
    answer = act(clients["rita"], "0b7f9c9e-0000-4000-8000-000000000000", "claim", warehouse, "K")

    assert answer.status_code == 503
    assert answer["Retry-After"].isdigit()


def test_the_same_key_for_an_alert_of_another_warehouse_is_422(
    crew, warehouse, other_warehouse, rep_notice, role, send
):
    users, clients = crew
    rita = clients["rita"]
    Subscription.objects.create(message_type=rep_notice, warehouse=other_warehouse, role=role)
    here, there = send(), send(warehouse=other_warehouse)
    assert act(rita, here.id, "claim", warehouse, key="K").status_code == 200

    elsewhere = act(rita, there.id, "claim", other_warehouse, key="K")

    assert elsewhere.status_code == 422
    assert [e for e, _ in events_of(users["rita"], other_warehouse, there.id)] == ["published"]
