"""Recorded dry runs of SQL rules: one per query at a time, queued for the rules queue, never
"running" for ever, and the pass that activation checks (the worker itself:
test_dry_run_worker.py)."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.urls import reverse

from config import timestamps
from inventory.models import Bin
from rules import dry_runs, tasks
from rules.domain import DryRunStatus
from rules.models import SqlRule, SqlRuleDryRun
from tests.rules_sql_role import RULES_READ_COMMITTED_DATA
from tests.settings import REDIS_SERVER

from .conftest import OK_QUERY

pytestmark = RULES_READ_COMMITTED_DATA


@pytest.fixture
def negative_bin(warehouse) -> Bin:
    return Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=-12, last_wave=8812)


def press(client, rule: SqlRule) -> str:
    """The rule page's Dry run button; the address of the page it answers with."""
    response = client.post(reverse("admin:rules_sqlrule_dry_run", args=[rule.pk]))
    assert response.status_code == 302
    return response["Location"]


def rules_queue_length() -> int:
    """Messages waiting in the broker (the plain Redis, also on the cluster pass)."""
    return int(REDIS_SERVER.client().llen(tasks.RULES_QUEUE))


def test_two_presses_of_the_same_query_share_one_dry_run(
    admin_client, sql_rule, negative_bin, worker_runs_dry_runs, django_capture_on_commit_callbacks
):
    rule = sql_rule(is_active=False)

    with django_capture_on_commit_callbacks(execute=True):
        first = press(admin_client, rule)
        second = press(admin_client, rule)

    assert first == second
    assert SqlRuleDryRun.objects.get().status == DryRunStatus.PENDING
    assert rules_queue_length() == 1  # one task, on the rules queue
    assert worker_runs_dry_runs() == 1
    assert press(admin_client, rule) != first  # finished: a new press is a new dry run


def test_an_edited_query_gets_its_own_dry_run_and_a_pass_counts_for_its_text_only(
    admin_client, sql_rule, negative_bin, worker_runs_dry_runs
):
    rule = sql_rule(is_active=False)
    asked = press(admin_client, rule)
    SqlRule.objects.filter(pk=rule.pk).update(query=OK_QUERY + " AND stock < -100")
    rule.refresh_from_db()

    assert press(admin_client, rule) != asked
    worker_runs_dry_runs()

    first = admin_client.get(asked).content.decode()
    assert "Replenish A-01-03" in first  # the query as it was when pressed
    assert "but the rule&#x27;s query has changed since: dry-run it again" in first
    rule.refresh_from_db()
    assert rule.dry_run_passed  # by the second dry run, of the current query


def test_a_dry_run_no_worker_takes_is_failed_after_the_wait(
    admin_client, sql_rule, clock, settings
):
    settings.RULES_DRY_RUN_WAIT_SECONDS = 60
    rule = sql_rule(is_active=False)
    page = press(admin_client, rule)

    clock.move_by(59_000)
    assert "Waiting for a worker" in admin_client.get(page).content.decode()
    clock.move_by(61_000)
    text = admin_client.get(page).content.decode()

    assert "No worker started the dry run within 60 s" in text
    assert "&#x27;rules&#x27; queue" in text
    assert 'http-equiv="refresh"' not in text
    assert tasks.dry_run_sql_rule(SqlRuleDryRun.objects.get().pk) == "not pending"
    assert not SqlRule.objects.get(pk=rule.pk).dry_run_passed


def test_a_dry_run_whose_worker_died_is_failed_after_the_time_limit_and_margin(
    admin_client, sql_rule, clock, settings, worker_runs_dry_runs
):
    settings.RULES_SQL_TIMEOUT_SECONDS = 10
    settings.RULES_DRY_RUN_MARGIN_SECONDS = 30
    rule = sql_rule(is_active=False)
    page = press(admin_client, rule)
    # A worker took it (as dry_run_perform does) and was killed before recording anything.
    SqlRuleDryRun.objects.update(status=DryRunStatus.RUNNING, started_at=clock_now(clock))

    clock.move_by(39_000)
    assert "Running since" in admin_client.get(page).content.decode()
    clock.move_by(41_000)
    text = admin_client.get(page).content.decode()

    assert "The worker running the dry run stopped before recording its result" in text
    assert "Failed (asked for by admin" in text
    assert worker_runs_dry_runs() == 0
    assert not SqlRule.objects.get(pk=rule.pk).dry_run_passed
    again = press(admin_client, rule)  # a new one, no longer blocked by the dead one
    assert again != page
    assert worker_runs_dry_runs() == 1
    assert SqlRule.objects.get(pk=rule.pk).dry_run_passed


def test_a_result_recorded_after_its_dry_run_was_failed_does_not_count(sql_rule, admin_user):
    rule = sql_rule(is_active=False)
    dry_run = dry_runs.dry_run_request(rule=rule, by=admin_user)
    SqlRuleDryRun.objects.update(status=DryRunStatus.FAILED, error="overdue")

    assert dry_runs.dry_run_perform(dry_run_id=dry_run.pk) is None

    dry_run.refresh_from_db()
    assert (dry_run.status, dry_run.error) == (DryRunStatus.FAILED, "overdue")
    assert not SqlRule.objects.get(pk=rule.pk).dry_run_passed


@pytest.mark.single_redis  # the broker is the server redis_down stops (on a cluster it is not)
def test_a_broker_that_cannot_be_reached_fails_the_dry_run_at_once(
    sql_rule, admin_user, redis_down, django_capture_on_commit_callbacks
):
    rule = sql_rule(is_active=False)

    # The service the admin calls (the admin itself answers 503 without Redis: sessions).
    with django_capture_on_commit_callbacks(execute=True):
        dry_run = dry_runs.dry_run_request(rule=rule, by=admin_user)

    dry_run.refresh_from_db()
    assert dry_run.status == DryRunStatus.FAILED
    assert "Could not queue the dry run for a worker" in dry_run.error


def clock_now(clock) -> datetime:
    return timestamps.ms_to_datetime(clock.now_ms())


def test_a_dry_run_the_database_refused_for_a_moment_is_tried_again(
    sql_rule, negative_bin, monkeypatch
):
    """The worker's first write refused (SQLite answers "database table is locked" while
    another connection reads the table): the task runs again shortly, and the dry run ends."""
    from django.db import OperationalError

    rule = sql_rule(is_active=False)
    dry_run, created = dry_runs.dry_run_open(rule=rule, by=None)
    assert created
    real = dry_runs.dry_run_perform
    refused: list[int] = []

    def refused_once(*, dry_run_id: int):
        if not refused:
            refused.append(dry_run_id)
            raise OperationalError("database table is locked: notifications_sqlruledryrun")
        return real(dry_run_id=dry_run_id)

    monkeypatch.setattr(dry_runs, "dry_run_perform", refused_once)

    # As a worker runs it (apply: here, with the task's retries).
    result = tasks.dry_run_sql_rule.apply(args=(dry_run.pk,))

    assert refused == [dry_run.pk]
    assert result.get() == DryRunStatus.PASSED
    assert SqlRuleDryRun.objects.get().status == DryRunStatus.PASSED
