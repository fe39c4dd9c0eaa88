"""A slow or misbehaving push service holds up nothing else (issue row M): a push request ends
by its time limit however the answer trickles in, no more of an answer than a push service
needs is read, and pushes wait on their own queue, never in front of the scheduled passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings as django_settings
from django.contrib.auth.models import Group
from prometheus_client import REGISTRY

from config import timestamps
from config.celery import app
from config.queues import product_queues
from push import services
from push.http import PushSession
from push.payload import Alert
from tests.waiting import eventually

ESCALATION_PASS = "notifications.tasks.escalate_notifications"


@pytest.fixture
def rita_phone(warehouse, crew, browser_at, subscribe):
    """rita's phone, subscribed for SH01, on the push service stand-in."""
    return subscribe(crew[0], browser_at("rita-phone"), warehouse)


def alert_for(warehouse) -> Alert:
    return Alert("n1", warehouse.pk, "t", "b", "critical", "open", timestamps.now_ms() + 60_000)


def queued(queue: str, *, purge: bool = False) -> int:
    """Messages waiting in a queue of the broker (then removed, with `purge`)."""
    with app.connection_for_write() as connection:
        waiting = connection.SimpleQueue(queue)
        try:
            return waiting.clear() if purge else waiting.qsize()
        finally:
            waiting.close()


def periodic_runs(task: str) -> float:
    labels = {"task": task, "outcome": "ran"}
    return REGISTRY.get_sample_value("wms_periodic_task_runs_total", labels) or 0.0


# --- One push request: a time limit on all of it, a cap on the answer --------------------------


def test_an_answer_trickled_a_byte_at_a_time_is_given_up_at_the_time_limit(
    warehouse, rita_phone, push_service, settings
):
    """Each byte comes well within the time limit, so a limit per read never trips; the limit
    is on the whole request (connect, send, answer), so the push ends as one that got no answer
    and is retried later."""
    settings.WEB_PUSH_TIMEOUT_SECONDS = 1
    trickle = push_service.trickle("rita-phone", every=0.2)  # the whole answer takes 17 s

    attempt = services.send(rita_phone, alert_for(warehouse), session=PushSession())

    assert attempt.outcome == services.Outcome.RETRY
    assert "Timeout" in attempt.error
    assert eventually(trickle.done.is_set)
    assert trickle.hung_up  # the client closed the connection before the answer was complete
    assert trickle.sent < trickle.size


def test_a_body_trickled_after_the_status_is_not_waited_for(
    warehouse, rita_phone, push_service, settings
):
    """The status came in time: it decides (201: sent); the rest of the body is not awaited."""
    settings.WEB_PUSH_TIMEOUT_SECONDS = 1
    trickle = push_service.trickle("rita-phone", every=0.2, status_at_once=True)

    attempt = services.send(rita_phone, alert_for(warehouse), session=PushSession())

    assert attempt.outcome == services.Outcome.SENT
    assert eventually(trickle.done.is_set)
    assert trickle.hung_up
    assert trickle.sent < trickle.size


@pytest.mark.parametrize(
    ("status", "outcome"),
    [(201, services.Outcome.SENT), (503, services.Outcome.RETRY)],
    ids=["created", "unavailable"],
)
def test_a_huge_answer_is_not_read_past_the_cap(
    warehouse, rita_phone, push_service, settings, status, outcome
):
    """A push service's answer is a status and a few bytes: of a 64 MiB one the client reads
    WEB_PUSH_MAX_RESPONSE_BYTES, then closes the connection; the status decides the outcome."""
    settings.WEB_PUSH_MAX_RESPONSE_BYTES = 1024
    size = 64 * 1024 * 1024
    flood = push_service.flood("rita-phone", status=status, size=size)

    attempt = services.send(rita_phone, alert_for(warehouse), session=PushSession())

    assert attempt.outcome == outcome
    assert eventually(flood.done.is_set)
    assert flood.hung_up
    # What the kernel's socket buffers took before the client closed, at most a few MiB.
    assert flood.sent < size // 4


def test_the_client_keeps_at_most_the_cap_of_an_answer(push_service, settings):
    settings.WEB_PUSH_MAX_RESPONSE_BYTES = 1024
    flood = push_service.flood("big", status=400, size=10 * 1024 * 1024)

    response = PushSession().post(push_service.endpoint("big"), data=b"{}", timeout=10)

    assert response.status_code == 400
    assert len(response.content) == 1024
    assert eventually(flood.done.is_set)
    assert flood.hung_up


# --- Queues: pushes apart from the scheduled passes ---------------------------------------------


def route(task: str) -> str:
    """The queue Celery sends the task to (its route, else the queue its task declares)."""
    from config.queues import queue_of

    return queue_of(app, task)


def test_pushes_have_their_own_queue_and_the_scheduled_passes_the_default_one(settings):
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}

    assert route("push.tasks.push_alert") == "push"
    assert route("push.tasks.push_retry") == "push"
    assert {ESCALATION_PASS, "shifts.tasks.hand_over_shifts"} <= scheduled
    assert {task: route(task) for task in scheduled} == dict.fromkeys(
        scheduled, app.conf.task_default_queue
    )
    assert app.conf.task_default_queue != "push"


@pytest.mark.parametrize("procfile", ["Procfile", "Procfile.production"])
def test_the_procfiles_start_workers_for_both_queues(procfile):
    """`manage.py demo` runs the Procfile; a deployment, Procfile.production
    (docs/operating/deploy.md)."""
    text = (Path(django_settings.BASE_DIR) / procfile).read_text()
    consumed: set[str] = set()
    for line in text.splitlines():
        words = line.partition(":")[2].split()
        if words[:4] == ["celery", "-A", "config", "worker"]:
            # Without -Q a worker consumes every queue of the product (config/queues.py).
            if "-Q" in words:
                consumed.update(words[words.index("-Q") + 1].split(","))
            else:
                consumed.update(product_queues())

    assert {app.conf.task_default_queue, "push"} <= consumed


def test_a_stuck_push_service_never_holds_up_an_escalation_pass(
    transactional_db, warehouse, crew, rep_notice, send, rita_phone, push_service, settings, clock
):
    """A worker of the default queue (`worker` in the Procfile) runs the scheduled passes. A
    push service that answers nothing for as long as it likes delays none of them: the pushes
    wait on their own queue for the push worker (none here), and the escalation pass runs."""
    settings.WEB_PUSH_TIMEOUT_SECONDS = 60
    push_service.hold()
    rep_notice.escalate_after_seconds = 120
    rep_notice.escalation_role = Group.objects.create(name="Supervisors")
    rep_notice.save()
    ran = periodic_runs(ESCALATION_PASS)

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        send()  # critical: pushed
        clock.move_by(121_000)
        # As beat sends it (CELERY_BEAT_SCHEDULE: the tick's header, and `expires`).
        beat_entry = settings.CELERY_BEAT_SCHEDULE["escalate-notifications"]
        app.send_task(ESCALATION_PASS, **beat_entry["options"])

        assert eventually(lambda: periodic_runs(ESCALATION_PASS) == ran + 1)

    assert push_service.received == []  # no push was even begun by this worker
    assert queued("push", purge=True) == 2  # the alert's push and its escalation's
