"""The outbox with real Celery workers: a worker killed (SIGKILL) in the middle of a webhook
call leaves one outcome, sent again with the same Idempotency-Key; and presses that race make
one run."""

from __future__ import annotations

import threading

from django.db import connections

from actions.models import ActionRun
from outbox.models import OutboxMessage
from outbox.tasks import pass_outbox
from tests.actions.conftest import QUEUES, fresh_connections
from tests.waiting import eventually
from tests.workers import kill, worker_process


def status_of(run_id: str) -> str:
    return ActionRun.objects.get(pk=run_id).status


def test_a_worker_killed_mid_call_leaves_one_outcome_and_the_same_idempotency_key(
    shared_database,
    replenishers,
    warehouse,
    make_action,
    send,
    press,
    receiver,
    client_for,
    settings,
):
    settings.OUTBOX_LEASE_SECONDS = 1.0  # how long a dead worker holds the message
    rita, _ = replenishers
    make_action()
    sent = send()
    receiver.hold()  # the WMS takes the call and does not answer yet

    run = press(rita, sent.id, "task-created").json()["run"]
    with worker_process(prepare=fresh_connections, queues=QUEUES) as worker:
        assert eventually(lambda: len(receiver.calls) == 1, timeout=20)
        message = OutboxMessage.objects.get(pk=run["id"])
        assert (message.status, message.attempts) == ("sending", 1)  # marked before the call
        kill(worker)
    receiver.release()
    assert status_of(run["id"]) == "pending"

    with worker_process(prepare=fresh_connections, queues=QUEUES):
        # Beat's next pass finds the message its dead worker held past the lease.
        assert eventually(
            lambda: pass_outbox.delay() and status_of(run["id"]) == "succeeded",
            timeout=30,
            interval=0.5,
        )

    first, second = receiver.calls
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"] == run["id"]
    assert first.body == second.body  # the same request: the WMS acts once
    message = OutboxMessage.objects.get(pk=run["id"])
    assert (message.status, message.attempts) == ("succeeded", 2)
    assert message.settled_at is not None
    events = (
        client_for(rita)
        .get(f"/api/v1/notifications/{sent.id}/history/", {"warehouse": warehouse.pk})
        .json()["results"]
    )
    assert [e["event"] for e in events].count("action_succeeded") == 1


def test_presses_at_once_make_one_run(
    shared_database, replenishers, make_action, send, press, receiver
):
    rita, ralf = replenishers
    make_action()
    sent, other = send(), send("Replenish B-02-01")

    def race(*presses) -> list[int]:
        barrier = threading.Barrier(len(presses))
        answers: list[int] = []

        def one(user, notification_id) -> None:
            barrier.wait()
            try:
                answers.append(press(user, notification_id, "task-created").status_code)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=one, args=p) for p in presses]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        return sorted(answers)

    # Two operators: one claims it and runs it, the other is told who has it.
    assert race((rita, sent.id), (ralf, sent.id)) == [202, 409]
    assert ActionRun.objects.filter(notification_id=sent.id).count() == 1
    # The same operator twice (two tabs, a double tap): one run, the other answers it.
    assert race((rita, other.id), (rita, other.id)) == [200, 202]
    assert ActionRun.objects.filter(notification_id=other.id).count() == 1


def test_a_worker_started_as_spec_6_says_sends_the_webhook(
    shared_database, replenishers, make_action, send, press, receiver
):
    """`celery -A config worker`, no -Q (SPEC 6): it consumes the outbox's queue too, so a
    press's run is sent and ends, not left `pending` for ever."""
    rita, _ = replenishers
    make_action()
    sent = send()

    run = press(rita, sent.id, "task-created").json()["run"]
    with worker_process(prepare=fresh_connections):
        assert eventually(lambda: status_of(run["id"]) == "succeeded", timeout=30)

    [call] = receiver.calls
    assert call.headers["idempotency-key"] == run["id"]
