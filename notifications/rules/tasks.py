"""The Celery tasks of rules: due rules (beat calls it every RULES_TICK_SECONDS), and the
admin's dry runs and runs of SQL rules, on a queue of their own."""

from __future__ import annotations

import logging

from celery import shared_task

from . import dry_runs, runner, sources
from .models import SqlRule

logger = logging.getLogger(__name__)

# Dry runs wait for the query (up to RULES_SQL_TIMEOUT_SECONDS each): on their own queue, a
# worker that consumes only it (Procfile.production) keeps them from delaying the scheduled
# passes on the default queue. A worker must consume it: `celery -A config worker -Q celery,rules`.
RULES_QUEUE = "rules"


@shared_task
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


@shared_task(queue=RULES_QUEUE)
def dry_run_sql_rule(dry_run_id: int) -> str:
    """Run a dry run asked for in the admin and record its result (SPEC 10: never in a web
    process). A dry run already taken, or failed as overdue, is left alone."""
    dry_run = dry_runs.dry_run_perform(dry_run_id=dry_run_id)
    return "not pending" if dry_run is None else dry_run.status


@shared_task(queue=RULES_QUEUE)
def run_sql_rules_now(rule_ids: list[int]) -> list[str]:
    """The admin's Run now: run these SQL rules once, as beat does, in a worker (never in a web
    process: SPEC 10); each run is recorded on its rule (its last run in the admin's list)."""
    rules = SqlRule.objects.filter(pk__in=rule_ids).select_related("message_type")
    runs = runner.run_rules(sources.sql_rules(rules))
    for run in runs:
        logger.info("%s", run.summary())
    return [run.summary() for run in runs]
