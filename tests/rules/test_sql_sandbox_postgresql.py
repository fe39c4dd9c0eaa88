"""SQL rules on PostgreSQL run as a role that can only SELECT the allowed tables, on a
connection of their own, and cannot call functions that act outside the query."""

from __future__ import annotations

import io
import resource

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from rest_framework.authtoken.models import Token

from rules import runner, sources, sql
from rules.models import SqlRule
from tests.rules_sql_role import RULES_READ_COMMITTED_DATA

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the PostgreSQL rules role"),
    RULES_READ_COMMITTED_DATA,
]

LEAK = (
    "SELECT 1 AS warehouse_id, t.key AS title, (SELECT string_agg(username || '=' || "
    "password, ' ') FROM auth_user) AS body FROM authtoken_token t"
)
COLUMNS = "1 AS warehouse_id, 'x' AS title, '' AS body"


def save_error(query: str) -> str:
    with pytest.raises(ValidationError) as caught:
        SqlRule(name="x", message_type_id=1, query=query).clean()
    return " ".join(caught.value.message_dict["query"])


def reading(table: str) -> str:
    return f"SELECT {COLUMNS} FROM {table}"


def test_the_command_grants_business_tables_only(settings, rules_sql_role):
    out = io.StringIO()

    call_command("create_rules_sql_role", stdout=out)

    text = out.getvalue()
    assert f"Updated the role {settings.RULES_SQL_ROLE} (LOGIN)." in text
    granted = next(line for line in text.splitlines() if line.startswith("Granted SELECT"))
    assert "inventory_bin" in granted
    assert "auth_user" not in granted
    assert "subscriptions_warehouse" not in granted
    assert "WARNING" not in text


def test_rules_connect_as_the_rules_role(settings):
    result = sql.execute_read_only("SELECT current_user AS who, session_user AS session")

    assert result.rows == [(settings.RULES_SQL_ROLE, settings.RULES_SQL_ROLE)]


def test_the_leak_of_the_issue_is_refused_at_save_and_at_run_time(sql_rule, admin_user):
    token = Token.objects.create(user=admin_user)
    assert "permission denied for table" in save_error(LEAK)
    rule = sql_rule(LEAK, clean=False)

    result = runner.run_rule(sources.SqlRuleRunnable(rule), dry_run=True)

    assert "permission denied for table" in result.error
    assert "SQL rules may read business tables only" in result.error
    assert token.key not in result.error
    assert result.outcomes == ()


@pytest.mark.parametrize(
    "table",
    [
        "auth_user",
        "authtoken_token",
        "django_session",
        "django_admin_log",
        "django_content_type",
        "django_migrations",
        "subscriptions_subscription",
        "notifications_sqlrule",
        "axes_accessattempt",
    ],
)
def test_reading_a_denied_table_is_refused(table):
    assert f"permission denied for table {table}" in save_error(reading(table))
    with pytest.raises(sql.SqlRuleError, match=f"permission denied for table {table}"):
        sql.execute_read_only(reading(table))


def test_pg_terminate_backend_is_refused_and_cannot_kill_the_application(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    query = f"SELECT {COLUMNS}, pg_terminate_backend({pid})::text AS key"

    assert "may not call the function pg_terminate_backend()" in save_error(query)
    # Below the text check, the role itself may not signal the application's sessions.
    with pytest.raises(sql.SqlRuleError, match=r"permission denied|must be a member"):
        sql.execute_read_only(f"SELECT pg_terminate_backend({pid})")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone() == (pid,)  # the application's session is alive


def test_pg_advisory_lock_is_refused_and_never_outlives_the_run(db):
    query = f"SELECT {COLUMNS}, pg_advisory_lock(42)::text AS key"

    assert "may not call the function pg_advisory_lock()" in save_error(query)
    sql.execute_read_only("SELECT pg_advisory_lock(42)")  # below the text check
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 42 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        assert cursor.fetchone() == (0,)  # its connection closed, and the lock with it


def test_without_the_role_password_rules_refuse_to_run(settings, db):
    settings.RULES_SQL_ROLE_PASSWORD = ""

    with pytest.raises(sql.SqlRuleError, match="RULES_SQL_ROLE_PASSWORD is not set"):
        sql.execute_read_only(f"SELECT {COLUMNS}")


@pytest.mark.parametrize(
    "query",
    [
        # Issue 20, rows 2b/2d: SQL text run by a function, past every check of the query's text.
        f"SELECT {COLUMNS} FROM ts_stat('SELECT pg_advisory_lock(4242)::text::tsvector')",
        f"SELECT {COLUMNS}, ts_rewrite('a'::tsquery, 'SELECT set_config(''x.y'', ''1'', false)')"
        "::text AS key",
        f"SELECT {COLUMNS}, \"pg_catalog\".\"pg_notify\"('x', 'y')::text AS key",
        f"SELECT {COLUMNS}, pg_sleep(0)::text AS key",
    ],
)
def test_functions_off_the_allow_list_are_refused_whatever_they_are_called(query, sql_rule):
    assert "may not call the function" in save_error(query)

    result = runner.run_rule(sources.SqlRuleRunnable(sql_rule(query, clean=False)), dry_run=True)

    assert "may not call the function" in result.error
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        assert cursor.fetchone() == (0,)


def test_a_huge_value_never_reaches_this_process(sql_rule, warehouse):
    """Issue 20, row 2b: repeat('x', 300000000) x 3 took 2,075 MiB in the process running it;
    now each column is cut on the server to what a notification may carry, and refused
    (3 x 100 MB here: fetched whole, they would take 300 MB)."""
    query = (
        f"SELECT {warehouse.pk} AS warehouse_id, 'x' AS title, lpad('', 100000000, 'x') AS body "
        "FROM generate_series(1, 3)"
    )
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB

    result = runner.run_rule(sources.SqlRuleRunnable(sql_rule(query)), dry_run=True)

    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024 < 100
    assert "body" in result.error
    assert "longer than" in result.error


def test_the_rules_session_is_bounded(db, settings):
    result = sql.execute_read_only(
        "SELECT current_setting('statement_timeout') AS a, current_setting('lock_timeout') AS b,"
        " current_setting('idle_in_transaction_session_timeout') AS c,"
        " current_setting('work_mem') AS d, current_setting('transaction_read_only') AS e",
        timeout=3,
    )

    assert result.rows == [("3s", "1s", "8s", "16MB", "on")]


def test_what_the_rules_role_can_read_of_the_catalogue(admin_user):
    """docs/guide/rules.md, *What SQL rules may read*: the role sees the schema (PostgreSQL
    grants its catalogue to every role), never the rows or statistics of a table it may not
    read. Run as the role, past the text checks, which refuse rule queries naming the
    catalogue."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE auth_user")  # column statistics exist for pg_stats to show
        cursor.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'auth_user'")
        assert cursor.fetchone()[0] > 0  # to the application's role, which owns the table

    columns = sql.execute_read_only(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'auth_user'::regclass AND attnum > 0"
    )
    assert ("password",) in columns.rows  # the names of the columns: yes
    counts = sql.execute_read_only(
        "SELECT reltuples >= 0 AS estimated FROM pg_class WHERE relname = 'auth_user'"
    )
    assert counts.rows == [(True,)]  # how many rows, roughly: yes
    for hidden in (
        "SELECT count(*) FROM pg_stats WHERE tablename = 'auth_user'",
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'auth_user'",
    ):
        assert sql.execute_read_only(hidden).rows == [(0,)]  # their values: no
    for refused in ("auth_user", "pg_authid", "pg_statistic", "pg_largeobject"):
        with pytest.raises(sql.SqlRuleError, match="permission denied"):
            sql.execute_read_only(f"SELECT * FROM {refused}")
    assert "may not read the database's catalogue" in save_error(
        f"SELECT {COLUMNS}, attname AS key FROM pg_attribute"
    )
