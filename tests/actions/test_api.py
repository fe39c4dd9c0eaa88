"""Pressing an alert action (SPEC 14): once, by someone who sees the alert, after a matching
scan; its run sent to the WMS webhook (a real HTTPS receiver) with a signature and the run's
id as Idempotency-Key; its outcome in the run, the history and, for a resolving action, the
alert."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import time

import pytest
from django.db.models.functions import Now
from redis.exceptions import RedisError

from actions.models import ActionRun, AlertAction
from outbox import services as outbox
from outbox.models import OutboxMessage
from tests.waiting import eventually


def writes(client) -> bool:
    try:
        return bool(client.set("probe", "1"))
    except RedisError:
        return False


def history(client, warehouse, notification_id) -> list[dict]:
    answer = client.get(
        f"/api/v1/notifications/{notification_id}/history/", {"warehouse": warehouse.pk}
    )
    assert answer.status_code == 200, answer.content
    return answer.json()["results"]


def item(client, warehouse, notification_id) -> dict:
    page = client.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk, "include_read": "true"}
    ).json()
    return next(n for n in page["results"] if n["id"] == notification_id)


@pytest.mark.django_db
def test_an_alert_lists_the_active_actions_of_its_type_in_the_callers_language(
    replenishers, warehouse, make_action, send, client_for, other_warehouse
):
    rita, _ = replenishers
    make_action("task-created", confirm_field="bin")
    make_action("off", label="Switched off", is_active=False)
    sent = send()
    client = client_for(rita)

    assert item(client, warehouse, sent.id)["actions"] == [
        {
            "code": "task-created",
            "label": "Replenishment task created",
            "confirm_field": "bin",
            "confirm_label": "Scan the bin",
            "available": True,
            "reason": None,
        }
    ]
    page = client.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk}, HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).json()
    assert page["results"][0]["actions"][0]["label"] == "已创建补货任务"

    # A change in the admin is seen at the next request.
    AlertAction.objects.filter(code="task-created").update(is_active=False)
    assert item(client, warehouse, sent.id)["actions"] == []


@pytest.mark.django_db
def test_pressing_claims_runs_the_webhook_once_and_records_its_outcome(
    replenishers, warehouse, make_action, send, press, client_for, receiver
):
    rita, ralf = replenishers
    action = make_action(confirm_field="bin", resolves=True)
    sent = send()

    answer = press(rita, sent.id, "task-created", scan=" a-01-03 ")

    assert answer.status_code == 202, answer.content
    run = answer.json()["run"]
    assert run["action"] == "task-created"
    assert run["status"] == "pending"
    assert run["by"] == {"id": rita.pk, "username": "rita"}
    assert run["result"] is None
    assert run["finished_at"] is None
    client = client_for(rita)
    assert item(client, warehouse, sent.id)["claimed_by"]["username"] == "rita"
    # Pressing again while it is pending answers the same run.
    again = press(rita, sent.id, "task-created", scan="A-01-03")
    assert again.status_code == 200
    assert again.json()["run"]["id"] == run["id"]

    assert outbox.deliver(run["id"]) == "succeeded"

    [call] = receiver.calls
    assert call.headers["idempotency-key"] == run["id"]
    expected = hmac.new(action.secret.encode(), call.body, hashlib.sha256).hexdigest()
    assert call.headers["x-wms-signature"] == f"sha256={expected}"
    assert call.headers["content-type"] == "application/json"
    body = call.json
    assert body["run"] == run["id"]
    assert body["action"] == "task-created"
    assert body["by"] == {"id": rita.pk, "username": "rita"}
    assert body["scan"] == " a-01-03 "
    assert body["notification"]["id"] == sent.id
    assert body["notification"]["data"] == {"bin": "A-01-03", "qty": -12}

    runs = client.get(
        f"/api/v1/notifications/{sent.id}/actions/", {"warehouse": warehouse.pk}
    ).json()["results"]
    assert [r["status"] for r in runs] == ["succeeded"]
    assert runs[0]["attempts"] == 1
    assert json.loads(runs[0]["result"]) == {"task": "RT-1"}
    assert runs[0]["finished_at"] is not None
    events = history(client, warehouse, sent.id)
    assert [(e["event"], (e["by"] or {}).get("username"), e["code"]) for e in events] == [
        ("published", None, None),
        ("claimed", "rita", None),
        ("action", "rita", "task-created"),
        ("action_succeeded", None, "task-created"),
        ("resolved", "rita", None),
    ]
    # Resolved by the action: a colleague's press (or another) is 409.
    assert press(ralf, sent.id, "task-created", scan="A-01-03").status_code == 409
    # Settling again (a worker killed after it stored the outcome) records nothing twice.
    outbox.settle(OutboxMessage.objects.get(pk=run["id"]))
    assert len(history(client, warehouse, sent.id)) == len(events)


@pytest.mark.django_db
def test_a_scan_that_does_not_match_runs_nothing(
    replenishers, warehouse, make_action, send, press, client_for, receiver
):
    rita, _ = replenishers
    make_action(confirm_field="bin")
    sent = send()

    for scan in ("A-01-04", "", None):
        body = {} if scan is None else {"scan": scan}
        answer = press(rita, sent.id, "task-created", **body)
        assert answer.status_code == 409
        assert answer.json()["field"] == "bin"
        assert "bin" in answer.json()["detail"]

    assert not ActionRun.objects.exists()
    assert not OutboxMessage.objects.exists()
    assert item(client_for(rita), warehouse, sent.id)["status"] == "open"
    assert receiver.calls == []


@pytest.mark.django_db
def test_who_may_press_what(
    replenishers, warehouse, make_action, send, press, client_for, make_user, redis
):
    rita, ralf = replenishers
    make_action()
    make_action("gone", is_active=False)
    sent = send()
    client_for(ralf).post(
        f"/api/v1/notifications/{sent.id}/claim/", {"warehouse": warehouse.pk}, format="json"
    )

    taken = press(rita, sent.id, "task-created")
    assert taken.status_code == 409
    assert taken.json()["claimed_by"] == {"id": ralf.pk, "username": "ralf"}
    outsider = make_user("olga")
    assert press(outsider, sent.id, "task-created").status_code == 404
    assert press(ralf, sent.id, "gone").status_code == 404
    assert press(ralf, sent.id, "no-such").status_code == 404
    assert press(ralf, "not-an-id", "task-created").status_code == 404
    bad = client_for(ralf).post(
        f"/api/v1/notifications/{sent.id}/actions/task-created/",
        data=b"{not json",
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert press(ralf, sent.id, "task-created", scan=["x"]).status_code == 400
    assert not ActionRun.objects.exists()
    assert press(ralf, sent.id, "task-created").status_code == 202


@pytest.mark.django_db
def test_a_press_reads_and_claims_in_one_call_and_an_action_of_another_type_changes_nothing(
    replenishers, warehouse, make_action, send, press, client_for, redis, monkeypatch
):
    from notifications import lifecycle
    from subscriptions.models import MessageType

    rita, _ = replenishers
    other = MessageType.objects.create(code="OTHER", name="other", default_ttl_seconds=60)
    make_action("elsewhere", message_type=other)
    make_action()
    sent = send()
    reads: list[str] = []
    monkeypatch.setattr(lifecycle, "peek", lambda **kwargs: reads.append("peek"))

    assert press(rita, sent.id, "elsewhere").status_code == 404  # REP_NOTICE has no such action
    shown = item(client_for(rita), warehouse, sent.id)
    assert (shown["status"], shown["read"]) == ("open", False)  # not claimed, not read
    assert [e["event"] for e in history(client_for(rita), warehouse, sent.id)] == ["published"]

    assert press(rita, sent.id, "task-created").status_code == 202
    assert reads == []  # nothing to check against the alert's data: no separate read
    assert item(client_for(rita), warehouse, sent.id)["claimed_by"]["id"] == rita.pk
    events = [e["event"] for e in history(client_for(rita), warehouse, sent.id)]
    assert events == ["published", "claimed", "action"]
    assert ActionRun.objects.count() == 1


@pytest.mark.django_db
def test_redis_down_is_503(replenishers, make_action, send, press, redis_down_later):
    rita, _ = replenishers
    make_action()
    sent = send()
    redis_down_later()
    answer = press(rita, sent.id, "task-created")
    assert answer.status_code == 503
    assert answer.has_header("Retry-After")
    assert not ActionRun.objects.exists()


@pytest.fixture
def redis_down_later(redis_server):
    from tests.conftest import _bring_redis_back

    stopped = []

    def stop() -> None:
        redis_server.stop()
        stopped.append(True)

    yield stop
    if stopped:
        _bring_redis_back()


@pytest.mark.django_db
def test_a_4xx_fails_at_once_and_a_5xx_is_tried_again(
    replenishers, warehouse, make_action, send, press, receiver, client_for, settings
):
    rita, _ = replenishers
    make_action()
    first, second = send("Replenish A-01-03"), send("Replenish B-02-01")
    receiver.answer((422, '{"error": "no such bin"}'))
    run = press(rita, first.id, "task-created").json()["run"]

    assert outbox.deliver(run["id"]) == "failed"
    found = ActionRun.objects.get(pk=run["id"])
    assert found.status == "failed"
    assert "no such bin" in found.result
    client = client_for(rita)
    assert item(client, warehouse, first.id)["claimed_by"]["username"] == "rita"
    assert history(client, warehouse, first.id)[-1]["event"] == "action_failed"
    # A failed run lets a new press start another.
    again = press(rita, first.id, "task-created")
    assert again.status_code == 202
    assert again.json()["run"]["id"] != run["id"]

    settings.ALERT_ACTION_MAX_ATTEMPTS = 2
    receiver.answer(503, 502)
    run = press(rita, second.id, "task-created").json()["run"]
    assert outbox.deliver(run["id"]) == "retry"
    message = OutboxMessage.objects.get(pk=run["id"])
    assert message.status == "pending"
    assert message.last_error == "HTTP 503"
    assert outbox.deliver(run["id"]) == "not due"  # the back-off holds it
    OutboxMessage.objects.filter(pk=run["id"]).update(next_attempt_at=message.created_at)
    assert outbox.deliver(run["id"]) == "failed"  # the last attempt
    assert ActionRun.objects.get(pk=run["id"]).status == "failed"
    assert [c.headers["idempotency-key"] for c in receiver.calls[-2:]] == [run["id"]] * 2


@pytest.mark.django_db
def test_an_action_switched_off_after_the_press_does_not_call_the_wms(
    replenishers, warehouse, make_action, send, press, receiver, client_for
):
    """Issue 38, row A: a send re-checks that its action is still active."""
    rita, _ = replenishers
    action = make_action()
    sent = send()
    run = press(rita, sent.id, "task-created").json()["run"]

    action.is_active = False
    action.save()
    assert outbox.deliver(run["id"]) == "failed"

    assert receiver.calls == []
    found = ActionRun.objects.get(pk=run["id"])
    assert found.status == "failed"
    assert "no longer active" in found.result
    client = client_for(rita)
    assert history(client, warehouse, sent.id)[-1]["event"] == "action_failed"
    # The alert stays claimed by the presser, as after any failed run.
    assert item(client, warehouse, sent.id)["claimed_by"]["username"] == "rita"


@pytest.mark.django_db
def test_a_run_keeps_its_outcome_when_its_outbox_row_is_deleted(
    replenishers, warehouse, make_action, send, press, receiver, client_for, settings
):
    """Outbox rows that ended go after OUTBOX_RETENTION_DAYS (SPEC 10); the run stays as it
    ended, attempts included."""
    rita, _ = replenishers
    make_action()
    sent = send()
    run = press(rita, sent.id, "task-created").json()["run"]
    assert outbox.deliver(run["id"]) == "succeeded"
    OutboxMessage.objects.filter(pk=run["id"]).update(
        finished_at=Now() - dt.timedelta(days=settings.OUTBOX_RETENTION_DAYS + 1)
    )

    assert outbox.purge_ended() == 1
    assert not OutboxMessage.objects.filter(pk=run["id"]).exists()
    runs = (
        client_for(rita)
        .get(f"/api/v1/notifications/{sent.id}/actions/", {"warehouse": warehouse.pk})
        .json()["results"]
    )
    assert [(r["id"], r["status"], r["attempts"]) for r in runs] == [(run["id"], "succeeded", 1)]
    assert json.loads(runs[0]["result"]) == {"task": "RT-1"}


@pytest.mark.django_db
def test_a_webhook_that_does_not_answer_is_given_up_before_the_lease_ends(
    replenishers, make_action, send, press, receiver, settings
):
    """No attempt outlives its lease (SPEC 10): the webhook's time limit is cut to the
    outbox's deadline, so another worker never calls the WMS while this call still waits."""
    settings.OUTBOX_LEASE_SECONDS = 2.0
    settings.ALERT_WEBHOOK_TIMEOUT_SECONDS = 10.0  # longer than the lease
    rita, _ = replenishers
    make_action()
    run = press(rita, send().id, "task-created").json()["run"]

    receiver.hold()  # the WMS takes the call and does not answer
    started = time.monotonic()
    try:
        assert outbox.deliver(run["id"]) == "retry"
    finally:
        receiver.release()
    assert time.monotonic() - started < settings.OUTBOX_LEASE_SECONDS
    assert OutboxMessage.objects.get(pk=run["id"]).attempts == 1


def test_the_first_retry_comes_within_a_minute(settings):
    for _ in range(50):
        assert outbox.backoff_seconds(1) <= 60
    assert outbox.backoff_seconds(10) <= settings.OUTBOX_RETRY_MAX_SECONDS


@pytest.mark.django_db
def test_an_idempotency_key_answers_the_first_answer(
    replenishers, make_action, send, press, warehouse
):
    rita, _ = replenishers
    make_action()
    sent = send()

    first = press(rita, sent.id, "task-created", key="press-1")
    assert first.status_code == 202
    again = press(rita, sent.id, "task-created", key="press-1")
    assert again.status_code == 202
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    other = press(rita, sent.id, "task-created", key="press-1", scan="A-01-03")
    assert other.status_code == 422
    assert press(rita, sent.id, "task-created", key="").status_code == 400
    assert press(rita, sent.id, "task-created", key="k" * 256).status_code == 400
    assert ActionRun.objects.count() == 1


@pytest.mark.single_redis
@pytest.mark.django_db
def test_a_press_answered_503_after_its_run_was_written_is_found_by_its_retry(
    replenishers, make_action, send, press, warehouse, client_for, redis, monkeypatch, settings
):
    """Redis stops answering right after the run's transaction commits (paused longer than
    the client waits): the press answers 503. The retry with the same key answers that run and
    records its `action` then; nothing is recorded or run twice."""
    rita, _ = replenishers
    make_action()
    sent, earlier = send(), send("Replenish B-02-01")
    # A press before: Redis knows the script (a first EVALSHA would be NOSCRIPT after the pause).
    assert press(rita, earlier.id, "task-created").status_code == 202
    from actions import services

    real = services._record_started
    paused: list[object] = []

    def redis_stops_answering(run):
        if not paused:
            paused.append(run.pk)
            wait_ms = int(settings.REDIS_SOCKET_TIMEOUT * 1000) + 500
            redis.execute_command("CLIENT", "PAUSE", wait_ms, "WRITE")
        return real(run)

    monkeypatch.setattr(services, "_record_started", redis_stops_answering)
    first = press(rita, sent.id, "task-created", key="press-9")
    assert first.status_code == 503
    assert first.has_header("Retry-After")
    assert ActionRun.objects.count() == 2  # the run was written before Redis went quiet
    client = client_for(rita)
    # Until the pause ends the retry would time out too.
    assert eventually(lambda: writes(redis), timeout=10)

    retry = press(rita, sent.id, "task-created", key="press-9")
    assert retry.status_code == 202
    assert retry["Idempotent-Replayed"] == "true"
    assert retry.json()["run"]["id"] == str(paused[0])
    assert ActionRun.objects.count() == 2
    events = [e["event"] for e in history(client, warehouse, sent.id)]
    assert events == ["published", "claimed", "action"]
