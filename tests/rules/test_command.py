"""`manage.py run_rules`: due rules, one named rule, dry runs, and readable output."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from config import timestamps
from inventory.models import Bin
from rules import dry_runs, store
from rules.domain import DryRunStatus
from rules.models import SqlRule, SqlRuleDryRun
from tests.rules_sql_role import RULES_READ_COMMITTED_DATA

from .conftest import alert


def run_rules(*args: str) -> str:
    out = StringIO()
    call_command("run_rules", *args, stdout=out)
    return out.getvalue()


def test_runs_the_due_rules_and_prints_counts(make_rule, rita, warehouse, inbox):
    make_rule(alerts=[alert(warehouse), alert(warehouse, "A-01-04")])

    output = run_rules()

    assert "Running 1 due rule:" in output
    assert (
        "- shortages (python, REP_NOTICE): 2 alerts: 2 sent to 2 inboxes, 0 already "
        "notified, 0 failed" in output
    )
    assert "Done: 1 rule, 2 alerts, 2 sent, 0 already notified, 0 failed." in output
    assert len(inbox(rita, warehouse)) == 2
    assert run_rules() == "No rule is due.\n"


def test_dry_run_prints_each_alert_and_sends_nothing(make_rule, rita, warehouse, inbox):
    make_rule(alerts=[alert(warehouse)])

    output = run_rules("--dry-run")

    assert "Dry run of 1 due rule:" in output
    assert (
        "would send  SH01  [A-01-03]  Replenish A-01-03 | Stock is -12 after wave 8812  "
        '{"bin": "A-01-03", "qty": -12}'
    ) in output
    assert "1 would be sent, 0 already notified. Nothing was sent." in output
    assert inbox(rita, warehouse) == []
    assert store.last_runs(["py:shortages"]) == {}  # still due: a dry run records nothing


def test_a_named_rule_runs_now_even_when_inactive_or_not_due(
    make_rule, sql_rule, settings, warehouse
):
    make_rule(alerts=[alert(warehouse)])
    settings.RULES_DISABLED = ["shortages"]
    sql_rule(is_active=False, name="Negative stock")

    assert "No rule is due." in run_rules()
    assert "1 sent to 0 inboxes" in run_rules("--rule", "shortages")
    assert "Negative stock (sql, REP_NOTICE): 0 alerts" in run_rules("--rule", "Negative stock")


def test_an_unknown_rule_lists_the_rules_there_are(make_rule):
    make_rule()

    with pytest.raises(CommandError, match=r"No rule is named 'nope'. Rules: shortages."):
        run_rules("--rule", "nope")


def test_a_python_and_an_sql_rule_of_the_same_name_are_told_apart(make_rule, sql_rule):
    make_rule("dup")
    sql_rule(name="dup")

    with pytest.raises(CommandError, match="say py:dup or sql:dup"):
        run_rules("--rule", "dup")
    assert "dup (sql, REP_NOTICE)" in run_rules("--rule", "sql:dup")


def test_failures_are_printed_and_make_the_command_fail(make_rule, warehouse):
    make_rule("broken", fails_with=RuntimeError("table gone"))
    make_rule("works", alerts=[alert(warehouse)])
    out = StringIO()

    with pytest.raises(CommandError, match=r"1 rule\(s\) failed: broken"):
        call_command("run_rules", stdout=out)

    assert "- broken (python, REP_NOTICE): FAILED: RuntimeError: table gone" in out.getvalue()
    assert "- works (python, REP_NOTICE): 1 alert: 1 sent" in out.getvalue()


@RULES_READ_COMMITTED_DATA
def test_a_dry_run_from_the_command_lets_the_rule_be_activated(sql_rule, warehouse):
    """Issue row G: the command's dry run was not recorded, so an implementer working from
    the shell could not switch the rule on."""
    Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=-12, last_wave=8812)
    rule = sql_rule(is_active=False, name="Negative stock")

    output = run_rules("--rule", "Negative stock", "--dry-run")

    rule = SqlRule.objects.get(pk=rule.pk)
    rule.is_active = True
    rule.full_clean()  # what saving "Is active" in the admin checks
    rule.save()
    recorded = SqlRuleDryRun.objects.get()
    assert output.splitlines() == [
        "Dry run of 1 rule:",
        f"- Negative stock: dry run {recorded.pk} recorded...",
        "- Negative stock: running its query here (time limit 10 s)...",
        output.splitlines()[3],  # the summary, with its time
        "    would send  SH01  [A-01-03]  Replenish A-01-03 | Stock is -12",
        f"  Dry run {recorded.pk} passed and is recorded: the rule can be activated with this "
        "query.",
        "Dry run: 1 rule, 1 alert, 1 would be sent, 0 already notified. Nothing was sent.",
    ]
    assert output.splitlines()[3].startswith(
        "- Negative stock (sql, REP_NOTICE): 1 alert: 1 would be sent, 0 already notified ["
    )
    assert recorded.status == DryRunStatus.PASSED
    assert recorded.requested_by is None


@RULES_READ_COMMITTED_DATA
def test_a_failed_dry_run_from_the_command_is_recorded_and_keeps_the_rule_off(sql_rule):
    rule = sql_rule(
        "SELECT warehouse_id, code AS title, '' AS body FROM gone", clean=False, is_active=False
    )

    out = StringIO()
    with pytest.raises(CommandError, match=r"1 rule\(s\) failed: negative stock"):
        call_command("run_rules", "--rule", "negative stock", "--dry-run", stdout=out)

    recorded = SqlRuleDryRun.objects.get()
    assert recorded.status == DryRunStatus.FAILED
    assert "The database refused the query" in recorded.error
    assert f"Dry run {recorded.pk} failed and is recorded" in out.getvalue()
    assert not SqlRule.objects.get(pk=rule.pk).dry_run_passed


@RULES_READ_COMMITTED_DATA
def test_the_command_runs_a_dry_run_the_admin_queued_and_the_admin_shows_it(
    sql_rule, admin_client, worker_runs_dry_runs
):
    rule = sql_rule(is_active=False, name="Negative stock")
    page = admin_client.post(reverse("admin:rules_sqlrule_dry_run", args=[rule.pk]))

    output = run_rules("--rule", "Negative stock", "--dry-run")

    assert "of this query was already asked for: joining it..." in output
    assert "running its query here" in output
    assert worker_runs_dry_runs() == 0  # the worker's task finds it done
    text = admin_client.get(page["Location"]).content.decode()
    assert "Passed (asked for by admin at " in text
    assert SqlRule.objects.get(pk=rule.pk).dry_run_passed


@RULES_READ_COMMITTED_DATA
def test_the_command_waits_for_a_dry_run_running_elsewhere_until_it_is_overdue(
    sql_rule, settings, admin_user
):
    settings.RULES_SQL_TIMEOUT_SECONDS = 0.2
    settings.RULES_DRY_RUN_MARGIN_SECONDS = 0.3
    rule = sql_rule(is_active=False, name="Negative stock")
    dry_runs.dry_run_request(rule=rule, by=admin_user)
    # A worker took it and was killed.
    SqlRuleDryRun.objects.update(status=DryRunStatus.RUNNING, started_at=timestamps.now())

    out = StringIO()
    with pytest.raises(CommandError, match="1 rule"):
        call_command("run_rules", "--rule", "Negative stock", "--dry-run", stdout=out)

    assert "it is running elsewhere (a worker): waiting for its result..." in out.getvalue()
    assert "The worker running the dry run stopped before recording its result" in out.getvalue()
