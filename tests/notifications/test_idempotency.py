"""Retries do not duplicate (SPEC 11): POST /api/v1/notifications/ and `publish()` with an
Idempotency-Key answer a repeat with the first answer and deliver nothing again."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from config.idempotency import KeyReused
from notifications import keys
from notifications.services import publish
from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def shift(make_user, warehouse, rep_notice, role):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    rita = make_user("rita", role)
    pete = make_user("pete")
    pete.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    paul = make_user("paul")
    paul.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    return rita, pete, paul


def post(api, warehouse, title: str, key: str | None = None, **extra):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    body = {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": title, **extra}
    return api.post("/api/v1/notifications/", body, format="json", **headers)


def inbox(api, warehouse) -> list[str]:
    answer = api.get("/api/v1/notifications/", {"warehouse": warehouse.pk})
    assert answer.status_code == 200
    return [item["id"] for item in answer.json()["results"]]


def test_a_repeated_publish_answers_the_first_answer_and_delivers_once(
    shift, client_for, warehouse
):
    rita, pete, paul = shift
    first = post(client_for(pete), warehouse, "Replenish A-01-03", key="pick-wave-8812/A-01-03")
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first
    again = post(client_for(pete), warehouse, "Replenish A-01-03", key="pick-wave-8812/A-01-03")
    assert again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert inbox(client_for(rita), warehouse) == [first.json()["id"]]
    # Another user's key is theirs: the same key publishes anew.
    theirs = post(client_for(paul), warehouse, "Replenish A-01-03", key="pick-wave-8812/A-01-03")
    assert theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs
    assert inbox(client_for(rita), warehouse) == [first.json()["id"], theirs.json()["id"]]


def test_the_same_key_with_another_body_is_422(shift, client_for, warehouse):
    rita, pete, _ = shift
    assert post(client_for(pete), warehouse, "Replenish A-01-03", key="k").status_code == 201
    other = post(client_for(pete), warehouse, "Replenish A-01-03", key="k", body="changed")
    assert other.status_code == 422
    assert len(inbox(client_for(rita), warehouse)) == 1


@pytest.mark.parametrize("key", ["", "k" * 256, "new\nline", "\u5e93\u5b58"])
def test_a_bad_key_is_400_and_publishes_nothing(shift, client_for, warehouse, key):
    rita, pete, _ = shift
    answer = post(client_for(pete), warehouse, "Replenish A-01-03", key=key)
    assert answer.status_code == 400
    assert "Idempotency-Key" in answer.json()
    assert inbox(client_for(rita), warehouse) == []


def test_a_key_of_255_characters_is_fine(shift, client_for, warehouse):
    _, pete, _ = shift
    assert post(client_for(pete), warehouse, "Replenish", key="k" * 255).status_code == 201


def test_python_publish_takes_an_idempotency_key(shift, warehouse, redis):
    first = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Replenish", idempotency_key="r-1"
    )
    again = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Replenish", idempotency_key="r-1"
    )
    assert not first.replayed
    assert again.replayed
    assert (again.id, again.recipients, again.created_at_ms, again.cursor) == (
        first.id,
        first.recipients,
        first.created_at_ms,
        first.cursor,
    )
    with pytest.raises(KeyReused):
        publish(
            message_type="REP_NOTICE", warehouse=warehouse, title="Other", idempotency_key="r-1"
        )
    record = keys.idempotency(warehouse.pk, "python", "r-1")
    assert record.startswith(f"wms:{{wh:{warehouse.pk}}}:idem:python:")
    assert 86_000 < redis.ttl(record) <= 86_400


def test_a_publish_to_nobody_is_recorded_too(warehouse, rep_notice):
    first = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Replenish", idempotency_key="n-1"
    )
    again = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Replenish", idempotency_key="n-1"
    )
    assert first.recipients == 0
    assert again.replayed
    assert again.id == first.id


def test_the_same_key_to_another_warehouse_is_422_and_delivers_nothing_there(
    shift, make_user, client_for, warehouse, other_warehouse, rep_notice, role
):
    _, pete, _ = shift
    Subscription.objects.create(message_type=rep_notice, warehouse=other_warehouse, role=role)
    bo = make_user("bo", role)
    first = post(client_for(pete), warehouse, "Replenish A-01-03", key="K")

    elsewhere = post(client_for(pete), other_warehouse, "Replenish A-01-03", key="K")

    assert first.status_code == 201
    assert elsewhere.status_code == 422
    assert "Idempotent-Replayed" not in elsewhere
    assert inbox(client_for(bo), other_warehouse) == []
    # The first one is still answered as it was.
    again = post(client_for(pete), warehouse, "Replenish A-01-03", key="K")
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()


def test_python_publish_with_the_same_key_to_another_warehouse_raises(
    shift, warehouse, other_warehouse
):
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish", idempotency_key="w")

    with pytest.raises(KeyReused):
        publish(
            message_type="REP_NOTICE",
            warehouse=other_warehouse,
            title="Replenish",
            idempotency_key="w",
        )


def test_a_retry_whose_first_attempt_bound_the_key_but_wrote_nothing_is_made(
    shift, warehouse, redis
):
    """On Redis Cluster the key is bound in a call of its own before the write: a first
    attempt that got no further (a timeout, a failover) left the binding and nothing else."""
    first = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Replenish", idempotency_key="b"
    )
    redis.delete(keys.idempotency(warehouse.pk, "python", "b"))  # as if never written

    retry = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title="Replenish", idempotency_key="b"
    )

    assert redis.exists(keys.idempotency_binding("python", "b")) == 1
    assert not retry.replayed
    assert retry.id != first.id
