"""SQL rules: only one read-only SELECT, the right columns, a time limit, recorded runs."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from inventory.demo import JSON_FUNCTIONS
from inventory.models import Bin
from rules import Alert, runner, sources, sql
from rules.domain import AlertStatus, RuleRun
from rules.models import SqlRule
from tests.rules_sql_role import RULES_READ_COMMITTED_DATA

from .conftest import OK_QUERY, alert

pytestmark = RULES_READ_COMMITTED_DATA

# SQLite's and PostgreSQL's words for the same errors (the suite runs on both).
MISSING_TABLE = r'no such table: gone|relation "gone" does not exist'
# SQLite's authorizer refuses the statement kind before query_only would refuse the write.
READ_ONLY = r"DELETE is not allowed in a rule's query|in a read-only transaction"

SLOW_QUERY = (
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
    "WHERE x < 1000000000000) "
    "SELECT MAX(x) AS warehouse_id, 'slow' AS title, '' AS body FROM n"
)


@pytest.fixture
def negative_bin(warehouse) -> Bin:
    return Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=-12, last_wave=8812)


def run(rule: SqlRule, *, dry_run: bool = False) -> RuleRun:
    rule = SqlRule.objects.select_related("message_type").get(pk=rule.pk)
    return runner.run_rule(sources.SqlRuleRunnable(rule), dry_run=dry_run)


def query_error(query: str) -> str:
    with pytest.raises(ValidationError) as caught:
        SqlRule(name="x", message_type_id=1, query=query).clean()
    return " ".join(caught.value.message_dict["query"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "INSERT INTO inventory_bin (warehouse_id, code, stock) VALUES (1, 'X', 1)",
            "INSERT is not allowed",
        ),
        ("UPDATE inventory_bin SET stock = 0", "UPDATE is not allowed"),
        ("DELETE FROM inventory_bin", "DELETE is not allowed"),
        ("DROP TABLE inventory_bin", "DROP is not allowed"),
        ("CREATE TABLE t (x int)", "CREATE is not allowed"),
        ("ALTER TABLE inventory_bin ADD COLUMN x int", "ALTER is not allowed"),
        (
            "SELECT 1 AS warehouse_id, 't' AS title, 'b' AS body; DELETE FROM inventory_bin",
            "Only one statement",
        ),
        ("SELECT 1 AS warehouse_id, 't' AS title, 'b' AS body; SELECT 2", "Only one statement"),
        ("PRAGMA query_only = OFF", "must be a SELECT"),
        ("ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH is not allowed"),
        (
            "WITH gone AS (DELETE FROM inventory_bin RETURNING *) "
            "SELECT warehouse_id, code AS title, '' AS body FROM gone",
            "DELETE is not allowed",
        ),
        (
            "SELECT warehouse_id, code AS title, '' AS body INTO copy FROM inventory_bin",
            "INTO is not allowed",
        ),
        (
            "SELECT warehouse_id, code AS title, '' AS body FROM inventory_bin FOR UPDATE",
            "UPDATE is not allowed",
        ),
        ("REPLACE INTO inventory_bin (id) VALUES (1)", "REPLACE is not allowed"),
        ("VALUES (1, 't', 'b')", "must be a SELECT"),
        ("   ", "empty"),
    ],
)
def test_anything_but_one_read_only_select_is_refused_at_save_time(query, message):
    assert message in query_error(query)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT warehouse_id, code AS title FROM inventory_bin", "does not return body"),
        ("SELECT code FROM inventory_bin", "does not return warehouse_id, title and body"),
        (
            "SELECT warehouse_id, code AS title, '' AS body, stock FROM inventory_bin",
            "Unexpected columns: stock",
        ),
        (
            "SELECT warehouse_id, code AS title, '' AS body FROM gone",
            "The database refused the query: ",
        ),
        ("SELECT warehouse_id, code AS title, '' AS body FROM inventory_bin WHERE", "refused"),
    ],
)
def test_a_query_without_the_required_columns_or_that_does_not_run_is_refused(query, message):
    assert message in query_error(query)


@pytest.mark.django_db
def test_messages_explain_what_a_query_must_return():
    assert "returns the columns warehouse_id, title and body" in query_error("SELECT 1 AS x")


def test_a_valid_query_passes_with_trailing_semicolon_comments_and_percent(sql_rule):
    rule = sql_rule("-- bins below zero\n" + OK_QUERY + " AND code LIKE 'A-%' ; -- done")

    assert rule.pk


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("DELETE FROM inventory_bin", "DELETE is not allowed"),
        (
            "INSERT INTO inventory_bin (warehouse_id, code, stock) SELECT warehouse_id, 'X', 1 "
            "FROM inventory_bin",
            "INSERT is not allowed",
        ),
        ("UPDATE inventory_bin SET stock = 0", "UPDATE is not allowed"),
        ("DROP TABLE inventory_bin", "DROP is not allowed"),
        (
            "SELECT warehouse_id, code AS title, '' AS body FROM inventory_bin; "
            "DELETE FROM inventory_bin",
            "Only one statement",
        ),
        ("PRAGMA query_only = OFF", "must be a SELECT"),
    ],
)
def test_a_forbidden_query_saved_around_the_admin_is_refused_at_run_time(
    sql_rule, negative_bin, query, message
):
    rule = sql_rule(query, clean=False)  # e.g. written straight into the table

    result = run(rule)

    assert message in result.error
    assert result.alert_count is None
    rule.refresh_from_db()
    assert message in rule.last_error
    assert rule.last_result_count is None
    assert list(Bin.objects.values_list("code", "stock")) == [("A-01-03", -12)]


def test_a_query_missing_columns_is_refused_at_run_time(sql_rule, negative_bin):
    rule = sql_rule("SELECT warehouse_id, code AS title FROM inventory_bin", clean=False)

    assert "does not return body" in run(rule).error


def test_the_connection_itself_is_read_only_while_a_rule_runs(negative_bin, warehouse):
    # Below the text checks: what if one were fooled? The database still refuses to write.
    with pytest.raises(sql.SqlRuleError, match=READ_ONLY):
        sql.execute_read_only("DELETE FROM inventory_bin")

    assert Bin.objects.count() == 1
    Bin.objects.create(warehouse=warehouse, code="B", stock=1)  # writable again afterwards


def test_a_slow_query_is_stopped_at_the_time_limit(sql_rule, settings, warehouse, rep_notice):
    settings.RULES_SQL_TIMEOUT_SECONDS = 0.2
    rule = sql_rule(SLOW_QUERY)  # valid: the LIMIT 0 check does not run it to the end
    started = time.monotonic()

    result = run(rule)

    assert time.monotonic() - started < 2
    assert result.error == "The query ran longer than the limit of 0.2 s and was stopped."
    rule.refresh_from_db()
    assert rule.last_error == result.error
    Bin.objects.create(warehouse=warehouse, code="B", stock=1)  # the connection still works


def test_a_run_is_recorded_and_a_later_good_run_clears_the_error(
    sql_rule, negative_bin, rita, warehouse, inbox
):
    rule = sql_rule()
    SqlRule.objects.filter(pk=rule.pk).update(last_error="old failure")

    result = run(rule)

    assert result.sent == 1
    rule.refresh_from_db()
    assert rule.last_result_count == 1
    assert rule.last_error == ""
    assert timezone.now() - rule.last_run_at < timedelta(seconds=5)
    (item,) = inbox(rita, warehouse)
    assert (item["title"], item["body"]) == ("Replenish A-01-03", "Stock is -12")


def test_sql_rules_de_duplicate_like_python_rules(sql_rule, negative_bin, rita, warehouse, inbox):
    rule = sql_rule()
    assert run(rule).sent == 1
    assert run(rule).duplicates == 1
    Bin.objects.filter(pk=negative_bin.pk).update(stock=5)
    assert run(rule).alert_count == 0
    Bin.objects.filter(pk=negative_bin.pk).update(stock=-1)

    assert run(rule).sent == 1
    assert len(inbox(rita, warehouse)) == 2


def test_data_key_and_defaults_come_from_the_columns(sql_rule, negative_bin, warehouse):
    json_object = JSON_FUNCTIONS[connection.vendor]
    rule = sql_rule(
        f"SELECT warehouse_id, 'Replenish ' || code AS title, NULL AS body, "
        f"{json_object}('bin', code, 'qty', stock) AS data FROM inventory_bin"
    )

    (outcome,) = run(rule, dry_run=True).outcomes

    assert outcome.alert == Alert(
        warehouse=warehouse.pk,
        title="Replenish A-01-03",
        body="",
        data={"bin": "A-01-03", "qty": -12},
        key="Replenish A-01-03",
    )
    assert outcome.status == AlertStatus.WOULD_SEND


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("'not json'", "Row 1: data is not valid JSON"),
        ("'[1, 2]'", "Row 1: data must be a JSON object"),
    ],
)
def test_bad_data_names_the_row(sql_rule, negative_bin, data, message):
    rule = sql_rule(
        f"SELECT warehouse_id, code AS title, '' AS body, {data} AS data FROM inventory_bin"
    )

    assert message in run(rule).error


def test_rows_beyond_the_limit_are_left_out_with_a_warning(sql_rule, warehouse, settings):
    settings.RULES_SQL_MAX_ROWS = 2
    for code in ("A", "B", "C"):
        Bin.objects.create(warehouse=warehouse, code=code, stock=-1)
    rule = sql_rule()

    result = run(rule)

    assert result.alert_count == 2
    rule.refresh_from_db()
    assert "only the first 2 were used" in rule.last_error


def test_a_broken_sql_rule_does_not_stop_the_others(
    sql_rule, make_rule, negative_bin, warehouse, rita, inbox
):
    broken = sql_rule(
        "SELECT warehouse_id, code AS title, '' AS body FROM gone", name="broken", clean=False
    )  # e.g. a table dropped after the rule was saved
    sql_rule(name="good")
    make_rule(alerts=[alert(warehouse, "B-01-01")])

    runs = {r.rule.name: r for r in runner.run_due_rules()}

    assert re.search(MISSING_TABLE, runs["broken"].error)
    assert runs["good"].sent == 1
    assert runs["shortages"].sent == 1
    broken.refresh_from_db()
    assert re.search(MISSING_TABLE, broken.last_error)
    assert broken.last_run_at is not None
    assert len(inbox(rita, warehouse)) == 2


def test_an_interval_edited_in_the_admin_takes_effect_at_the_next_tick(sql_rule, rules_registry):
    rule = sql_rule(interval_seconds=60)
    SqlRule.objects.filter(pk=rule.pk).update(last_run_at=timezone.now() - timedelta(seconds=40))
    assert sources.due_rules() == []

    SqlRule.objects.filter(pk=rule.pk).update(interval_seconds=30)

    assert [r.info.name for r in sources.due_rules()] == [rule.name]


def test_inactive_sql_rules_are_not_due(sql_rule, rules_registry):
    sql_rule(is_active=False)

    assert sources.due_rules() == []
