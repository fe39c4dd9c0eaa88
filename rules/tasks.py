"""The Celery tasks of rules: due rules (beat calls it every RULES_TICK_SECONDS), and the
admin's dry runs and runs of SQL rules, on a queue of their own."""

from __future__ import annotations

import logging
from dataclasses import asdict

from celery import shared_task

from . import cleanup, runner, sources
from .dry_runs import RULES_QUEUE, dry_run_sql_rule
from .models import SqlRule

logger = logging.getLogger(__name__)

# The dry run's task is declared in dry_runs.py, beside the code that queues it, under this
# module's name (so the two modules import one way only); it is listed here with the others.
# The tasks keep the names they had when rules lived in notifications/ (notifications.rules):
# messages already queued, and beat entries of a beat not yet restarted, still find them.
_OLD_MODULE = "notifications.rules.tasks"
__all__ = [
    "RULES_QUEUE",
    "dry_run_sql_rule",
    "run_due_rules",
    "run_sql_rules_now",
    "sweep_rule_orphans",
]


@shared_task(name=f"{_OLD_MODULE}.run_due_rules")
def run_due_rules() -> dict[str, int]:
    """Run every active rule that is due. Schedules are read from the rules themselves on every
    tick, so an interval edited in the admin takes effect without restarting beat."""
    runs = runner.run_due_rules()
    for run in runs:
        if run.sent or not run.ok:
            logger.info("%s", run.summary())
    return {
        "rules": len(runs),
        "sent": sum(run.sent for run in runs),
        "failed_rules": sum(1 for run in runs if run.error),
        "failed_alerts": sum(run.failed for run in runs),
    }


@shared_task(name=f"{_OLD_MODULE}.run_sql_rules_now", queue=RULES_QUEUE)
def run_sql_rules_now(rule_ids: list[int]) -> list[str]:
    """The admin's Run now: run these SQL rules once, as beat does, in a worker (never in a web
    process: SPEC 10); each run is recorded on its rule (its last run in the admin's list)."""
    rules = SqlRule.objects.filter(pk__in=rule_ids).select_related("message_type")
    runs = runner.run_rules(sources.sql_rules(rules))
    for run in runs:
        logger.info("%s", run.summary())
    return [run.summary() for run in runs]


@shared_task
def sweep_rule_orphans() -> dict[str, int]:
    """The last runs of rules that no longer exist (beat, every ORPHAN_SWEEP_SECONDS)."""
    report = cleanup.sweep_orphans()
    if report.last_runs:
        logger.info("Rules orphan sweep: %s", report)
    return asdict(report)
