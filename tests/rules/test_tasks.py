"""The Celery task beat runs: it finds the due rules itself on every tick."""

from __future__ import annotations

from django.conf import settings

from config import queues
from config.celery import app
from rules.tasks import dry_run_sql_rule, run_due_rules, run_sql_rules_now

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
    queues._import_tasks()  # every app's tasks module, as a worker's autodiscovery imports them
    # Named as when rules lived in notifications/: messages already queued still find it.
    assert app.tasks["notifications.rules.tasks.run_due_rules"] == run_due_rules  # the proxied task


def test_the_tasks_keep_the_names_they_had_in_notifications():
    """Messages queued before rules became their own app name the tasks the old way."""
    assert (run_due_rules.name, run_sql_rules_now.name, dry_run_sql_rule.name) == (
        "notifications.rules.tasks.run_due_rules",
        "notifications.rules.tasks.run_sql_rules_now",
        "notifications.rules.tasks.dry_run_sql_rule",
    )
