"""Dry runs of SQL rules: recorded when asked for, run outside the web process, and what
activation checks (SPEC 4 and 10).

The admin's Dry run records a pending dry run and queues it for a Celery worker on the `rules`
queue (`dry_run_request`); the web request never runs the rule's SQL, and the admin's page
refreshes until the worker has recorded the result. `manage.py run_rules --dry-run` records
an SQL rule's dry run the same way (`dry_run_open`) and runs it in its own process
(`dry_run_here`). Both finish through `dry_run_perform`, the one place that records a result
and, when it passed, the query on the rule (SqlRule.dry_run_passed_query), which is what lets
the rule be activated.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction

from config import timestamps
from config.users import User

from . import runner
from .base import Alert
from .domain import AlertOutcome, AlertStatus, DryRunStatus, RuleRun
from .models import SqlRule, SqlRuleDryRun, query_digest
from .sources import SqlRuleRunnable

logger = logging.getLogger(__name__)

# Finished dry runs kept per rule (the newest); older ones go when a new one is recorded.
KEPT_PER_RULE = 10
# How often run_rules looks again at a dry run that another process is running.
WAIT_POLL_SECONDS = 0.5


def dry_run_request(*, rule: SqlRule, by: User | None) -> SqlRuleDryRun:
    """The admin's Dry run: record a pending dry run of the rule's current query and queue it
    for a worker once the transaction commits; never runs the query here.

    While a dry run of the same query is unfinished, pressing again answers that one (no second
    run is queued): both presses want the same answer, and a slow query would otherwise hold
    one worker per press.
    """
    dry_run, created = dry_run_open(rule=rule, by=by)
    if created:
        dry_run_id, timeout = dry_run.pk, dry_run.timeout_seconds
        transaction.on_commit(lambda: _enqueue(dry_run_id, timeout))
    return dry_run


def dry_run_here(
    *, rule: SqlRule, by: User | None = None, progress: Callable[[str], None] | None = None
) -> SqlRuleDryRun:
    """`run_rules --dry-run` of an SQL rule: record the dry run as the admin's Dry run does,
    and run it in this process (a command, not a web request). When a dry run of the same query
    is already unfinished, this joins it: one still waiting for a worker is run here, one
    running elsewhere is waited for (until it finishes or is overdue). `progress` hears what
    happens, in short phrases."""
    say = progress or (lambda _: None)
    dry_run, created = dry_run_open(rule=rule, by=by)
    if created:
        say(f"dry run {dry_run.pk} recorded")
    else:
        say(f"dry run {dry_run.pk} of this query was already asked for: joining it")
    if dry_run.status == DryRunStatus.PENDING:
        say(f"running its query here (time limit {dry_run.timeout_seconds:g} s)")
        done = dry_run_perform(dry_run_id=dry_run.pk)
        if done is not None:
            return done
    say("it is running elsewhere (a worker): waiting for its result")
    while not dry_run.finished:
        time.sleep(WAIT_POLL_SECONDS)
        dry_run = dry_run_current(SqlRuleDryRun.objects.get(pk=dry_run.pk))
    return dry_run


def dry_run_open(*, rule: SqlRule, by: User | None) -> tuple[SqlRuleDryRun, bool]:
    """The unfinished dry run of the rule's current query, recorded now if there is none (True).

    A database constraint allows one unfinished dry run per rule and query text, so of two
    presses at once the second finds the first's. One whose worker is overdue is failed first.
    """
    digest = query_digest(rule.query)
    unfinished = SqlRuleDryRun.objects.filter(
        rule=rule, query_sha256=digest, status__in=DryRunStatus.unfinished()
    )
    for _attempt in range(3):
        for stale in unfinished.all():
            dry_run_current(stale)
        try:
            with transaction.atomic():
                dry_run = SqlRuleDryRun.objects.create(
                    rule=rule,
                    query=rule.query,
                    query_sha256=digest,
                    requested_by=by,
                    timeout_seconds=float(settings.RULES_SQL_TIMEOUT_SECONDS),
                    created_at=timestamps.now(),
                )
        except IntegrityError:
            existing = unfinished.first()
            if existing is not None:
                return existing, False
            continue  # it finished in between: record a new one
        _forget_old(rule)
        return dry_run, True
    raise RuntimeError(f"Could not record a dry run of rule {rule.pk}.")


def dry_run_perform(*, dry_run_id: int) -> SqlRuleDryRun | None:
    """Run a pending dry run in this process and record its result (the worker's task, and
    run_rules). None, and nothing runs, when it is not pending any more: another process took
    it, or it was failed as overdue."""
    started = timestamps.now()
    taken = SqlRuleDryRun.objects.filter(pk=dry_run_id, status=DryRunStatus.PENDING).update(
        status=DryRunStatus.RUNNING, started_at=started
    )
    if not taken:
        return None
    dry_run = SqlRuleDryRun.objects.select_related("rule__message_type").get(pk=dry_run_id)
    rule = dry_run.rule
    rule.query = dry_run.query  # the query asked for, even if the rule was edited since
    try:
        run = runner.run_rule(SqlRuleRunnable(rule), dry_run=True)
    except Exception as exc:  # recorded, so the page does not wait for the deadline
        logger.exception("Dry run %s failed", dry_run_id)
        run = RuleRun(
            rule=SqlRuleRunnable(rule).info,
            started_ms=timestamps.now_ms(),
            dry_run=True,
            error=f"{type(exc).__name__}: {exc}",
        )
    _finish(dry_run, run)
    dry_run.refresh_from_db()
    return dry_run


def dry_run_current(dry_run: SqlRuleDryRun) -> SqlRuleDryRun:
    """The dry run as it stands; one whose worker is overdue is recorded as failed first.

    Overdue: still pending RULES_DRY_RUN_WAIT_SECONDS after it was asked for (no worker took
    it), or running past its time limit plus RULES_DRY_RUN_MARGIN_SECONDS (its worker died:
    the query itself is stopped at the time limit).
    """
    reason = _overdue(dry_run, timestamps.now())
    if reason:
        SqlRuleDryRun.objects.filter(pk=dry_run.pk, status=dry_run.status).update(
            status=DryRunStatus.FAILED, finished_at=timestamps.now(), error=reason
        )
        dry_run.refresh_from_db()
    return dry_run


def dry_run_result(dry_run: SqlRuleDryRun) -> RuleRun:
    """The recorded result as the runner reports a run (the admin's page, run_rules)."""
    started = dry_run.started_at or dry_run.created_at
    return RuleRun(
        rule=SqlRuleRunnable(dry_run.rule).info,
        started_ms=int(started.timestamp() * 1000),
        elapsed_ms=dry_run.elapsed_ms or 0.0,
        dry_run=True,
        alert_count=dry_run.alert_count,
        outcomes=tuple(_outcome(item) for item in dry_run.outcomes),
        error=dry_run.error,
        warning=dry_run.warning,
    )


def dry_runs_current(ids: Iterable[int]) -> list[SqlRuleDryRun]:
    """These dry runs as they stand (the admin's page), in the order of `ids`."""
    wanted = list(dict.fromkeys(ids))
    found = SqlRuleDryRun.objects.select_related("rule__message_type", "requested_by").in_bulk(
        wanted
    )
    return [dry_run_current(found[pk]) for pk in wanted if pk in found]


def _overdue(dry_run: SqlRuleDryRun, now: datetime) -> str:
    if dry_run.status == DryRunStatus.PENDING:
        wait = float(settings.RULES_DRY_RUN_WAIT_SECONDS)
        if now - dry_run.created_at > timedelta(seconds=wait):
            return (
                f"No worker started the dry run within {wait:g} s. Is a Celery worker "
                f"consuming the 'rules' queue running (celery -A config worker -Q celery,rules)?"
            )
    elif dry_run.status == DryRunStatus.RUNNING and dry_run.started_at is not None:
        allowed = dry_run.timeout_seconds + float(settings.RULES_DRY_RUN_MARGIN_SECONDS)
        if now - dry_run.started_at > timedelta(seconds=allowed):
            return (
                f"The worker running the dry run stopped before recording its result "
                f"(nothing for {allowed:g} s, the time limit plus a margin): it was probably "
                f"killed or restarted. Start the dry run again."
            )
    return ""


def _finish(dry_run: SqlRuleDryRun, run: RuleRun) -> None:
    problem = run.problem()
    status = DryRunStatus.FAILED if problem else DryRunStatus.PASSED
    with transaction.atomic():
        # Only while still running: a run failed as overdue keeps that verdict.
        running = SqlRuleDryRun.objects.filter(pk=dry_run.pk, status=DryRunStatus.RUNNING)
        recorded = running.update(
            status=status,
            finished_at=timestamps.now(),
            elapsed_ms=run.elapsed_ms,
            alert_count=run.alert_count,
            error=run.error,
            warning=run.warning,
            outcomes=[_outcome_record(outcome) for outcome in run.outcomes],
        )
        if recorded and status == DryRunStatus.PASSED:
            # Only while the rule still has this query: an edit meanwhile needs its own.
            SqlRule.objects.filter(pk=dry_run.rule_id, query=dry_run.query).update(
                dry_run_passed_query=dry_run.query
            )


# Dry runs wait for the query (up to RULES_SQL_TIMEOUT_SECONDS each): on their own queue, a
# worker that consumes only it (Procfile.production) keeps them from delaying the scheduled
# passes on the default queue. A worker must consume it: `celery -A config worker -Q celery,rules`.
RULES_QUEUE = "rules"


# Declared here, beside the code that queues it, under the tasks module's name (which lists
# it): so dry_runs and tasks import one way only. The name is the one the task had when rules
# lived in notifications/ (see tasks.py): messages already queued still find it.
@shared_task(
    name="notifications.rules.tasks.dry_run_sql_rule", queue=RULES_QUEUE, bind=True, max_retries=5
)
def dry_run_sql_rule(self: Any, dry_run_id: int) -> str:
    """Run a dry run asked for in the admin and record its result (SPEC 10: never in a web
    process). A dry run already taken, or failed as overdue, is left alone. The database
    refusing a write for a moment (SQLite: "database is locked") is tried again shortly,
    rather than leaving the dry run pending until it is overdue."""
    try:
        dry_run = dry_run_perform(dry_run_id=dry_run_id)
    except OperationalError as exc:
        raise self.retry(exc=exc, countdown=0.1 * 2**self.request.retries) from exc
    return "not pending" if dry_run is None else dry_run.status


def _enqueue(dry_run_id: int, timeout_seconds: float) -> None:
    try:
        dry_run_sql_rule.apply_async(
            args=(dry_run_id,),
            # A message no worker took in time is dropped: the dry run is failed by then.
            expires=float(settings.RULES_DRY_RUN_WAIT_SECONDS),
            # Prefork workers: a task stuck past the time limit plus the margin is killed.
            time_limit=math.ceil(timeout_seconds + settings.RULES_DRY_RUN_MARGIN_SECONDS),
        )
    except Exception as exc:  # the broker's errors vary: kombu, redis, OS
        logger.warning("Could not queue dry run %s: %s", dry_run_id, exc)
        SqlRuleDryRun.objects.filter(pk=dry_run_id, status=DryRunStatus.PENDING).update(
            status=DryRunStatus.FAILED,
            finished_at=timestamps.now(),
            error=f"Could not queue the dry run for a worker (is the broker reachable?): {exc}",
        )


def _forget_old(rule: SqlRule) -> None:
    of_rule = SqlRuleDryRun.objects.filter(rule=rule)
    newest = list(of_rule.values_list("pk", flat=True)[:KEPT_PER_RULE])
    of_rule.exclude(status__in=DryRunStatus.unfinished()).exclude(pk__in=newest).delete()


def _outcome_record(outcome: AlertOutcome) -> dict[str, Any]:
    alert = outcome.alert
    return {
        "warehouse_id": alert.warehouse_id,
        "key": alert.key,
        "title": alert.title,
        "body": alert.body,
        "data": alert.data,
        "status": str(outcome.status),
    }


def _outcome(item: dict[str, Any]) -> AlertOutcome:
    alert = Alert(
        warehouse=int(item["warehouse_id"]),
        title=item["title"],
        body=item["body"],
        data=item["data"],
        key=item["key"],
    )
    return AlertOutcome(alert, AlertStatus(item["status"]))
