"""`manage.py run_rules`: due rules, one named rule, dry runs, and readable output."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from notifications.rules import store

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
