"""The Celery task beat runs: it finds the due rules itself on every tick."""

from __future__ import annotations

from django.conf import settings

from notifications import tasks as notification_tasks
from notifications.rules.tasks import run_due_rules

from .conftest import alert


def test_the_task_runs_due_rules_and_reports_counts(make_rule, rita, warehouse, inbox):
    make_rule("works", alerts=[alert(warehouse)])
    make_rule("broken", fails_with=RuntimeError("boom"))

    assert run_due_rules.apply().get() == {
        "rules": 2,
        "sent": 1,
        "failed_rules": 1,
        "failed_alerts": 0,
    }
    assert run_due_rules.apply().get()["rules"] == 0  # nothing is due again yet
    assert len(inbox(rita, warehouse)) == 1


def test_beat_runs_the_task_every_tick_and_autodiscovery_finds_it():
    entry = settings.CELERY_BEAT_SCHEDULE["run-due-rules"]

    assert entry["task"] == run_due_rules.name == "notifications.rules.tasks.run_due_rules"
    assert entry["schedule"] == settings.RULES_TICK_SECONDS
    assert notification_tasks.run_due_rules is run_due_rules
