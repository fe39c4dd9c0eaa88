"""A run's outcome in words (SPEC 14, "Outcomes on the page"): R carries `error`, what went
wrong in the request's language, so the page (and any client) can say what failed: "The WMS
answered 404", "could not be reached", "did not answer in time". Against a real HTTPS
receiver (tests/https_stand_in.py), sent by the outbox's own code."""

from __future__ import annotations

import pytest

from devredis.embedded_redis import free_port
from outbox import services as outbox


def runs(client_for, user, warehouse, notification_id, language: str = "en") -> list[dict]:
    answer = client_for(user).get(
        f"/api/v1/notifications/{notification_id}/actions/",
        {"warehouse": warehouse.pk},
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert answer.status_code == 200, answer.content
    return answer.json()["results"]


@pytest.mark.django_db
def test_a_run_the_wms_refused_says_so_in_words_in_the_callers_language(
    replenishers, warehouse, make_action, send, press, receiver, client_for
):
    rita, _ = replenishers
    make_action()
    sent = send()
    receiver.answer((404, "{}"))  # the body says nothing: the status must be said

    pressed = press(rita, sent.id, "task-created").json()["run"]
    assert pressed["error"] is None  # sent, no answer yet

    assert outbox.deliver(pressed["id"]) == "failed"

    [run] = runs(client_for, rita, warehouse, sent.id)
    assert run["status"] == "failed"
    assert run["error"] == {
        "kind": "answered",
        "http_status": 404,
        "message": "The WMS answered 404 (Not Found).",
    }
    [zh] = runs(client_for, rita, warehouse, sent.id, language="zh-hans")
    assert zh["error"]["kind"] == "answered"
    assert "404" in zh["error"]["message"]
    assert "WMS 返回了" in zh["error"]["message"]


@pytest.mark.django_db
def test_a_wms_that_cannot_be_reached_or_does_not_answer_in_time(
    replenishers, warehouse, make_action, send, press, receiver, client_for, settings
):
    rita, _ = replenishers
    settings.ALERT_ACTION_MAX_ATTEMPTS = 1
    closed = f"127.0.0.1:{free_port()}"  # nothing listens there
    settings.ALERT_WEBHOOK_ALLOWED_HOSTS = [receiver.host, closed]
    make_action("nowhere", url=f"https://{closed}/wms")
    make_action("slow")
    unreachable, slow = send("Replenish A-01-03"), send("Replenish B-02-01")

    run = press(rita, unreachable.id, "nowhere").json()["run"]
    assert outbox.deliver(run["id"]) == "failed"
    [found] = runs(client_for, rita, warehouse, unreachable.id)
    assert found["error"]["kind"] == "unreachable"
    assert found["error"]["http_status"] is None
    assert found["error"]["message"] == "The WMS could not be reached."

    settings.ALERT_WEBHOOK_TIMEOUT_SECONDS = 0.5
    receiver.hold()  # it takes the call and does not answer
    try:
        run = press(rita, slow.id, "slow").json()["run"]
        assert outbox.deliver(run["id"]) == "failed"
    finally:
        receiver.release()
    [found] = runs(client_for, rita, warehouse, slow.id)
    assert found["error"]["kind"] == "timeout"
    assert found["error"]["message"] == "The WMS did not answer within 0.5 seconds."


@pytest.mark.django_db
def test_a_pending_run_says_why_its_last_attempt_failed_and_a_final_one_how_often_it_tried(
    replenishers, warehouse, make_action, send, press, receiver, client_for, settings
):
    from outbox.models import OutboxMessage

    rita, _ = replenishers
    settings.ALERT_ACTION_MAX_ATTEMPTS = 2
    make_action()
    sent = send()
    receiver.answer(503, 503)

    run = press(rita, sent.id, "task-created").json()["run"]
    assert outbox.deliver(run["id"]) == "retry"
    [found] = runs(client_for, rita, warehouse, sent.id)
    assert found["status"] == "pending"
    assert found["error"]["http_status"] == 503
    assert found["error"]["message"] == (
        "The WMS answered 503 (Service Unavailable). It will be tried again."
    )

    message = OutboxMessage.objects.get(pk=run["id"])
    OutboxMessage.objects.filter(pk=run["id"]).update(next_attempt_at=message.created_at)
    assert outbox.deliver(run["id"]) == "failed"
    [found] = runs(client_for, rita, warehouse, sent.id)
    assert found["error"]["message"] == "The WMS answered 503 (Service Unavailable). Tried 2 times."


@pytest.mark.django_db
def test_a_succeeded_run_has_no_error(
    replenishers, warehouse, make_action, send, press, receiver, client_for
):
    rita, _ = replenishers
    make_action()
    sent = send()
    run = press(rita, sent.id, "task-created").json()["run"]
    assert outbox.deliver(run["id"]) == "succeeded"

    [found] = runs(client_for, rita, warehouse, sent.id)
    assert (found["status"], found["error"]) == ("succeeded", None)
