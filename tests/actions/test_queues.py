"""The outbox's task runs on its own queue, and every way of running the system starts a worker
that consumes it (Procfile: the demo; Procfile.production; docs/operating/deploy.md)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from config.celery import app
from config.queues import queue_of

BASE_DIR = Path(settings.BASE_DIR)


def test_the_outbox_task_is_routed_to_its_queue_and_beat_passes_are_not():
    assert queue_of(app, "outbox.tasks.deliver") == "outbox"
    periodic = (
        "outbox.tasks.pass_outbox",
        "outbox.tasks.purge_outbox",
        "actions.tasks.send_reminders",
    )
    for task in periodic:
        assert queue_of(app, task) == "celery"
    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert set(periodic) <= schedule


def test_every_procfile_runs_a_worker_for_the_outbox_queue():
    for name in ("Procfile", "Procfile.production"):
        lines = dict(
            line.split(":", 1) for line in (BASE_DIR / name).read_text().splitlines() if line
        )
        assert "-Q outbox" in lines["outbox"], name
        assert lines["outbox"].split()[:4] == ["celery", "-A", "config", "worker"], name
    assert "-Q outbox" in (BASE_DIR / "docs" / "operating" / "deploy.md").read_text()
