"""The outbox's relay (SPEC 10, "What goes out is kept bounded"): beat's pass queues a message
once while its lease holds, not on every pass; leases are timed by the database's clock, not
by each worker's; rows that ended are deleted after OUTBOX_RETENTION_DAYS by a beat entry the
outbox registers itself."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db.models.functions import Now

from config.beat_schedule import TICK_HEADER
from outbox import services as outbox
from outbox import tasks
from outbox.models import OutboxMessage
from tests.outbox.conftest import PROBE, in_thread
from tests.waiting import eventually

MINUTE_MS = 60_000


def test_a_message_already_queued_is_not_queued_again_while_its_lease_holds(
    transactional_db, probe, queued, settings
):
    """Issue 38, row D: one message and no worker made 4 tasks after 3 passes."""
    settings.OUTBOX_LEASE_SECONDS = 1.0
    outbox.enqueue(kind=PROBE, payload={})  # committed: its task is queued at once
    assert queued() == 1

    assert [outbox.pass_due()["due"] for _ in range(3)] == [0, 0, 0]
    assert queued() == 1

    # No worker took it within its lease: a pass queues it once more, then holds again.
    assert eventually(lambda: outbox.pass_due()["due"] == 1, timeout=10, interval=0.1)
    assert outbox.pass_due()["due"] == 0
    assert queued() == 2


def test_lost_and_unsettled_messages_are_queued_once_per_lease(
    transactional_db, probe, queued, settings
):
    settings.OUTBOX_LEASE_SECONDS = 1.0
    message = outbox.enqueue(kind=PROBE, payload={}, queue_on_commit=False)
    probe.hold()  # its worker hangs past the lease, as one that died would
    worker, results = in_thread(lambda: outbox.deliver(str(message.pk)))
    assert eventually(lambda: probe.calls == 1)

    assert eventually(lambda: outbox.pass_due()["lost"] == 1, timeout=10, interval=0.1)
    assert [outbox.pass_due()["lost"] for _ in range(3)] == [0, 0, 0]
    assert queued() == 1
    probe.release()
    worker.join(30)
    assert results == ["succeeded"]  # nobody took it over: its outcome stands

    # A worker killed between storing the outcome and settling it: settled by a later pass,
    # queued once per lease too.
    OutboxMessage.objects.filter(pk=message.pk).update(settled_at=None)
    assert eventually(lambda: outbox.pass_due()["unsettled"] == 1, timeout=10, interval=0.1)
    assert [outbox.pass_due()["unsettled"] for _ in range(3)] == [0, 0, 0]
    assert queued() == 2


def test_a_worker_whose_clock_runs_ahead_leaves_a_held_lease_alone(transactional_db, probe, clock):
    message = outbox.enqueue(kind=PROBE, payload={}, queue_on_commit=False)
    probe.hold()
    worker, results = in_thread(lambda: outbox.deliver(str(message.pk)))
    assert eventually(lambda: probe.calls == 1)

    clock.move_by(10 * MINUTE_MS)  # this worker's clock is ten minutes fast
    assert outbox.deliver(str(message.pk)) == "not due"
    assert outbox.pass_due()["lost"] == 0

    probe.release()
    worker.join(30)
    assert results == ["succeeded"]
    assert probe.calls == 1


def test_a_worker_whose_clock_runs_behind_still_holds_a_whole_lease(transactional_db, probe, clock):
    message = outbox.enqueue(kind=PROBE, payload={}, queue_on_commit=False)
    clock.move_by(-10 * MINUTE_MS)  # the first worker's clock is ten minutes slow
    probe.hold()
    worker, results = in_thread(lambda: outbox.deliver(str(message.pk)))
    assert eventually(lambda: probe.calls == 1)
    assert OutboxMessage.objects.filter(pk=message.pk, lease_until__gt=Now()).exists()

    clock.move_by(0)  # another worker, on time
    assert outbox.deliver(str(message.pk)) == "not due"

    probe.release()
    worker.join(30)
    assert results == ["succeeded"]
    assert probe.calls == 1


def ended(status: str, *, days_ago: float, settled: bool = True) -> str:
    message = outbox.enqueue(kind=PROBE, payload={}, queue_on_commit=False)
    OutboxMessage.objects.filter(pk=message.pk).update(
        status=status,
        attempts=1,
        finished_at=Now() - dt.timedelta(days=days_ago),
        settled_at=Now() if settled else None,
    )
    return str(message.pk)


@pytest.mark.django_db
def test_rows_that_ended_are_deleted_after_the_retention(probe, settings):
    settings.OUTBOX_RETENTION_DAYS = 14
    gone = {ended("succeeded", days_ago=15), ended("failed", days_ago=40)}
    kept = {
        ended("succeeded", days_ago=13),  # recent
        ended("failed", days_ago=15, settled=False),  # its feature has not recorded it yet
        str(outbox.enqueue(kind=PROBE, payload={}, queue_on_commit=False).pk),  # waiting
    }
    assert gone.isdisjoint(kept)

    assert outbox.purge_ended() == 2
    assert {str(pk) for pk in OutboxMessage.objects.values_list("pk", flat=True)} == kept
    assert outbox.purge_ended() == 0


@pytest.mark.django_db
def test_the_purge_runs_in_bounded_batches(probe, settings):
    settings.OUTBOX_RETENTION_DAYS = 1
    for _ in range(5):
        ended("succeeded", days_ago=2)
    assert outbox.purge_ended(batch=2, batches=2) == 4
    assert OutboxMessage.objects.count() == 1


@pytest.mark.django_db
def test_beat_purges_through_an_entry_the_outbox_registers(probe, settings, celery_eager):
    entry = settings.CELERY_BEAT_SCHEDULE["purge-outbox"]
    assert entry["task"] == "outbox.tasks.purge_outbox"
    assert TICK_HEADER in entry["options"]["headers"]  # once per tick, however many beats
    assert settings.CELERY_BEAT_SCHEDULE["pass-outbox"]["task"] == "outbox.tasks.pass_outbox"
    # The outbox registers its own entries and route: settings name none of its tasks.
    text = (Path(django_settings.BASE_DIR) / "config" / "settings.py").read_text()
    assert "outbox.tasks" not in text

    settings.OUTBOX_RETENTION_DAYS = 14
    ended("succeeded", days_ago=15)
    assert tasks.purge_outbox.delay().get() == 1
    assert not OutboxMessage.objects.exists()


def test_retention_is_fourteen_days_unless_set():
    assert django_settings.OUTBOX_RETENTION_DAYS == 14
