"""SQL rules: one read-only SELECT, run in a sandbox the database enforces, with a time limit."""

# Defence in depth, because the query is typed by people in the admin:
# 1. `check_query` parses the text (sqlparse) and refuses anything but a single SELECT (or
#    WITH ... SELECT): no INSERT/UPDATE/DELETE, DDL, PRAGMA, ATTACH, SELECT INTO, FOR UPDATE,
#    several statements, nor calls of denied functions (sql_policy.DENIED_FUNCTIONS); on
#    PostgreSQL, from its own parse tree, calls of functions off the allow list and reads of the
#    catalogue, which the rules role can read like every role. It runs when the rule is saved
#    and again before every run.
# 2. The query runs wrapped as a sub-query (`SELECT * FROM (<query>) AS rule_rows`), which the
#    database refuses to parse if it is not a query.
# 3. The database itself confines it (the text checks are only the first line):
#    SQLite: an authorizer on the connection (sql_sqlite) refuses reads of denied tables, every
#    function not on an allow list, and every statement kind but SELECT; `PRAGMA query_only`
#    makes the connection read-only meanwhile.
#    PostgreSQL: a connection of its own as RULES_SQL_ROLE (sql_postgresql), a role that may
#    only SELECT the allowed tables, in a READ ONLY transaction that is rolled back.
# 4. It has a time limit: SQLite's progress handler aborts it after the deadline, PostgreSQL's
#    `SET LOCAL statement_timeout` cancels it.

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlparse
from django.conf import settings
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from sqlparse import tokens as T

from config import jsonvalues
from notifications.domain import ALERT_KEY_MAX_LENGTH

from . import sql_postgresql, sql_sqlite
from .base import Alert
from .sql_policy import (
    POSTGRESQL_ALLOWED_FUNCTIONS,
    TABLES_HELP,
    called_functions,
    function_denied,
    postgresql_names,
)

REQUIRED_COLUMNS = ("warehouse_id", "title", "body")
OPTIONAL_COLUMNS = ("key", "data")
COLUMNS_HELP = (
    "A rule's query returns the columns warehouse_id, title and body, and optionally "
    "key and data (JSON text); name them with AS."
)

# Keywords with no business inside a read-only SELECT (sqlparse marks DML and DDL keywords
# itself; statements such as PRAGMA or ATTACH are not SELECTs, so the statement type catches
# them). INTO catches SELECT ... INTO new_table, SHARE the row locks of FOR SHARE.
FORBIDDEN_KEYWORDS = frozenset(
    {
        "ATTACH",
        "DETACH",
        "PRAGMA",
        "VACUUM",
        "INTO",
        "COPY",
        "LOCK",
        "SHARE",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
    }
)
ALLOWED_DML = frozenset({"SELECT"})
# PostgreSQL's codes for a statement cancelled by statement_timeout, and for a permission
# the rules role lacks.
PG_QUERY_CANCELED = "57014"
PG_INSUFFICIENT_PRIVILEGE = "42501"
# The SQLite progress handler runs every this many virtual machine instructions: often enough to
# stop within milliseconds of the deadline, rarely enough to cost nothing measurable.
SQLITE_PROGRESS_STEPS = 1000


class SqlRuleError(ValueError):
    """A query that may not or could not run, with a message for the person who wrote it."""


class SqlRuleTimeout(SqlRuleError):
    """The query ran past the time limit and was stopped."""


@dataclass(frozen=True)
class QueryResult:
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    truncated: bool


def check_query(query: str, *, vendor: str | None = None) -> str:
    """The query without trailing semicolons, if it is one read-only SELECT; else SqlRuleError.

    On PostgreSQL (`vendor`), also every function it calls must be on the allow list and it may
    not read the catalogue, both read from PostgreSQL's own parse tree."""
    text = (query or "").strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    if not text:
        raise SqlRuleError("The query is empty.")
    statements = [s for s in sqlparse.parse(text) if s.token_first(skip_cm=True, skip_ws=True)]
    if len(statements) != 1:
        raise SqlRuleError(
            "Only one statement is allowed: remove the extra statements "
            "(a ';' inside the query ends a statement)."
        )
    statement = statements[0]
    for token in statement.flatten():
        word = token.normalized.upper()
        if token.ttype in T.Keyword.DML and word not in ALLOWED_DML:
            raise SqlRuleError(f"{word} is not allowed: a rule's query may only read (SELECT).")
        if token.ttype in T.Keyword.DDL:
            raise SqlRuleError(
                f"{word} is not allowed: a rule's query may not change the "
                f"schema; it may only read (SELECT)."
            )
        if token.ttype in T.Keyword and word in FORBIDDEN_KEYWORDS:
            raise SqlRuleError(
                f"{word} is not allowed in a rule's query: it may only read (a single SELECT)."
            )
    if statement.get_type() != "SELECT":
        raise SqlRuleError("The query must be a SELECT (or WITH ... SELECT).")
    for name in called_functions(statement):
        if name == "U&":
            raise SqlRuleError(
                'Unicode-escaped names (U&"...") are not allowed in a rule\'s query.'
            )
        if function_denied(name):
            raise SqlRuleError(
                f"The query may not call the function {name}(): it has effects outside the "
                f"query or reads outside the database, and a rule's query may only read."
            )
    if vendor == "postgresql":
        _check_postgresql_tree(text)
    # Without its trailing ';' and comments (sqlparse keeps a comment after the ';' in the
    # statement), which would break the sub-query the query is wrapped in.
    tokens = list(statement.flatten())
    while tokens and (
        tokens[-1].is_whitespace
        or tokens[-1].ttype in T.Comment
        or tokens[-1].match(T.Punctuation, ";")
    ):
        tokens.pop()
    return "".join(token.value for token in tokens)


def _check_postgresql_tree(text: str) -> None:
    try:
        names = postgresql_names(text)
    except ValueError as exc:
        raise SqlRuleError(f"The database refused the query: it does not parse ({exc}).") from None
    if names.catalogue:
        raise SqlRuleError(
            f"The query may not read the database's catalogue ({names.catalogue[0]}): SQL rules "
            f"read business tables only; see docs/guide/rules.md, 'What SQL rules may read'."
        )
    for name in names.functions:
        if name not in POSTGRESQL_ALLOWED_FUNCTIONS:
            raise SqlRuleError(
                f"The query may not call the function {name}(): SQL rules may call plain "
                f"functions only (such as count, sum, coalesce, lower, substr, "
                f"json_build_object, date_trunc); see docs/guide/rules.md, "
                f"'What SQL rules may read'."
            )


def check_columns(columns: Sequence[str]) -> None:
    """Raise SqlRuleError unless the columns are the ones a rule's query returns."""
    seen = [c.lower() for c in columns]
    duplicates = sorted({c for c in seen if seen.count(c) > 1})
    if duplicates:
        raise SqlRuleError(f"Column names repeat: {', '.join(duplicates)}. {COLUMNS_HELP}")
    missing = [c for c in REQUIRED_COLUMNS if c not in seen]
    if missing:
        raise SqlRuleError(f"The query does not return {_and(missing)}. {COLUMNS_HELP}")
    unknown = [c for c in seen if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
    if unknown:
        raise SqlRuleError(f"Unexpected columns: {', '.join(unknown)}. {COLUMNS_HELP}")


def validate(query: str, *, using: str | None = None, timeout: float | None = None) -> None:
    """What saving a rule checks: one read-only SELECT that runs and returns the right columns.

    The query runs read-only with LIMIT 0, so this costs a plan, not a scan.
    """
    text = check_query(query, vendor=_vendor(using))
    # S608: `text` passed check_query (one SELECT, allowed tables and functions only) and runs
    # read-only, time-limited, as the rules' own role: the rule's author writes SQL by design.
    result = execute_read_only(
        f"SELECT * FROM ({text}\n) AS rule_rows LIMIT 0",  # noqa: S608
        using=using,
        timeout=timeout,
        max_rows=0,
    )
    check_columns(result.columns)


def run_query(
    query: str,
    *,
    using: str | None = None,
    timeout: float | None = None,
    max_rows: int | None = None,
) -> QueryResult:
    """Check the query again and run it read-only within the time limit (no more rows than
    RULES_SQL_MAX_ROWS are read, no value longer than a notification may carry, and no more than
    RULES_SQL_MAX_RESULT_BYTES in all)."""
    text = check_query(query, vendor=_vendor(using))
    # On the query's own first line, so the database's "LINE n" in errors matches the rule's.
    # S608: checked and sandboxed as in validate().
    result = execute_read_only(
        f"SELECT * FROM ({text}\n) AS rule_rows",  # noqa: S608
        using=using,
        timeout=timeout,
        max_rows=max_rows,
        bounded=True,
    )
    check_columns(result.columns)
    return result


def _vendor(using: str | None) -> str:
    return str(connections[using or settings.RULES_SQL_DATABASE].vendor)


def value_limits() -> dict[str, int]:
    """The longest text a rule's column may bring back: what a notification may carry."""
    return {
        "warehouse_id": 20,
        "title": settings.NOTIFICATION_TITLE_MAX_LENGTH,
        "body": settings.NOTIFICATION_BODY_MAX_LENGTH,
        "key": ALERT_KEY_MAX_LENGTH,
        "data": settings.NOTIFICATION_DATA_MAX_BYTES,
    }


def execute_read_only(
    sql: str,
    *,
    using: str | None = None,
    timeout: float | None = None,
    max_rows: int | None = None,
    bounded: bool = False,
) -> QueryResult:
    """Run one statement in the rules' sandbox with a time limit; no text checks.

    Database errors come back as SqlRuleError with the database's own message.
    """
    alias = using or settings.RULES_SQL_DATABASE
    limit = float(settings.RULES_SQL_TIMEOUT_SECONDS if timeout is None else timeout)
    wanted = int(settings.RULES_SQL_MAX_ROWS if max_rows is None else max_rows)
    connection = connections[alias]
    if connection.vendor == "sqlite":
        return _run_on_sqlite(connection, sql, limit, wanted)
    if connection.vendor == "postgresql":
        return _run_on_postgresql(connection, sql, limit, wanted, bounded)
    raise SqlRuleError(f"SQL rules run on SQLite and PostgreSQL, not on {connection.vendor}.")


def _fetch(cursor: Any, wanted: int) -> QueryResult:
    """At most `wanted` rows, a few at a time, refusing a result past RULES_SQL_MAX_RESULT_BYTES."""
    columns = tuple(col[0] for col in cursor.description or ())
    cap = settings.RULES_SQL_MAX_RESULT_BYTES
    rows: list[tuple[Any, ...]] = []
    size = 0
    while wanted and len(rows) <= wanted:
        batch = cursor.fetchmany(min(100, wanted + 1 - len(rows)))
        if not batch:
            break
        for row in batch:
            size += sum(len(str(value)) for value in row)
            if size > cap:
                raise SqlRuleError(
                    f"The query's result is larger than RULES_SQL_MAX_RESULT_BYTES ({cap} "
                    f"bytes): return fewer or shorter rows."
                )
            rows.append(tuple(row))
    return QueryResult(columns=columns, rows=rows[:wanted], truncated=len(rows) > wanted)


def _timed_out(limit: float) -> SqlRuleTimeout:
    return SqlRuleTimeout(f"The query ran longer than the limit of {limit:g} s and was stopped.")


def _run_on_sqlite(
    connection: BaseDatabaseWrapper, sql: str, limit: float, wanted: int
) -> QueryResult:
    # Django's own connection (not a second one): it sees the same data, including an
    # in-memory test database. query_only makes every write on it fail meanwhile, and the
    # authorizer is removed afterwards, so Django's own statements are unaffected.
    guard = _TimeLimit(limit)
    connection.ensure_connection()
    raw = connection.connection
    raw.execute("PRAGMA query_only = ON")
    # Bounds on what one statement may build, so a value of a gigabyte (printf('%.*c', ...),
    # replace(), group_concat()) fails with "string or blob too big" instead of filling memory.
    before = {category: raw.setlimit(category, value) for category, value in _sqlite_limits()}
    guard.start()
    raw.set_progress_handler(guard, SQLITE_PROGRESS_STEPS)
    try:
        with sql_sqlite.sandbox(raw) as authorizer:
            cursor = raw.cursor()
            try:
                cursor.execute(sql)
                return _fetch(cursor, wanted)
            finally:
                cursor.close()
    except sqlite3.DatabaseError as exc:
        if guard.expired:
            raise _timed_out(limit) from exc
        if authorizer.refusal:
            raise SqlRuleError(authorizer.refusal) from exc
        raise SqlRuleError(f"The database refused the query: {exc}") from exc
    finally:
        raw.set_progress_handler(None, SQLITE_PROGRESS_STEPS)
        for category, value in before.items():
            raw.setlimit(category, value)
        raw.execute("PRAGMA query_only = OFF")


def _sqlite_limits() -> list[tuple[int, int]]:
    """sqlite3_limit() categories and their values while a rule's query runs."""
    return [
        (sqlite3.SQLITE_LIMIT_LENGTH, settings.RULES_SQL_MAX_VALUE_BYTES),
        (sqlite3.SQLITE_LIMIT_SQL_LENGTH, 100_000),
        (sqlite3.SQLITE_LIMIT_COLUMN, 100),
        (sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 100),
        (sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 20),
        (sqlite3.SQLITE_LIMIT_FUNCTION_ARG, 32),
        (sqlite3.SQLITE_LIMIT_ATTACHED, 0),
        (sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000),
        (sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH, 0),
    ]


def _run_on_postgresql(
    connection: BaseDatabaseWrapper, sql: str, limit: float, wanted: int, bounded: bool
) -> QueryResult:
    import psycopg

    try:
        with sql_postgresql.read_only_cursor(connection, max(1, int(limit * 1000))) as cursor:
            if bounded:
                # Each column cut on the server to a little more than a notification may
                # carry (rows_to_alerts refuses what is longer): a value of hundreds of
                # megabytes never reaches this process.
                cursor.execute(f"{sql} LIMIT 0")
                check_columns([col[0] for col in cursor.description or ()])
                sql = _bounded_columns(sql, [col[0] for col in cursor.description or ()])
                # A server-side cursor: rows come a few at a time, never the whole result.
                with cursor.connection.cursor(name="rule_rows") as rows:
                    rows.execute(sql)
                    return _fetch(rows, wanted)
            cursor.execute(sql)
            return _fetch(cursor, wanted)
    except sql_postgresql.RulesRoleMissing as exc:
        raise SqlRuleError(str(exc)) from exc
    except psycopg.Error as exc:
        message = str(exc).strip()
        if exc.sqlstate == PG_QUERY_CANCELED:
            raise _timed_out(limit) from exc
        if exc.sqlstate == PG_INSUFFICIENT_PRIVILEGE:
            raise SqlRuleError(f"The database refused the query: {message}. {TABLES_HELP}") from exc
        if isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None:
            raise SqlRuleError(
                f"Could not connect to the database as the SQL rules role: {message}"
            ) from exc
        raise SqlRuleError(f"The database refused the query: {message}") from exc


def _bounded_columns(sql: str, columns: list[str]) -> str:
    limits = value_limits()
    parts = []
    for column in columns:  # check_columns allowed only the five known names
        name = '"' + column.replace('"', '""') + '"'
        longest = limits[column.lower()] + 1
        parts.append(f"left(bounded.{name}::text, {longest}) AS {name}")
    return f"SELECT {', '.join(parts)} FROM ({sql}) AS bounded"  # noqa: S608


class _TimeLimit:
    """SQLite's progress handler: tells SQLite to abort once the deadline has passed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = 0.0
        self.expired = False

    def start(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def __call__(self) -> int:
        if time.monotonic() > self.deadline:
            self.expired = True
            return 1  # non-zero: SQLite stops the statement with "interrupted"
        return 0


def rows_to_alerts(result: QueryResult) -> list[Alert]:
    """Turn the rows of a rule's query into alerts; SqlRuleError names the first bad row."""
    columns = [c.lower() for c in result.columns]
    alerts = []
    for number, values in enumerate(result.rows, start=1):
        row = dict(zip(columns, values, strict=True))
        alerts.append(_alert(number, row))
    return alerts


def _alert(number: int, row: dict[str, Any]) -> Alert:
    warehouse = row["warehouse_id"]
    try:
        warehouse_id = int(warehouse)
    except (TypeError, ValueError):
        raise SqlRuleError(
            f"Row {number}: warehouse_id is {warehouse!r}, not a warehouse id."
        ) from None
    title = "" if row["title"] is None else str(row["title"]).strip()
    if not title:
        raise SqlRuleError(f"Row {number}: the title is empty.")
    body = "" if row["body"] is None else str(row["body"])
    limits = value_limits()
    for name, value in (("title", title), ("body", body)):
        if len(value) > limits[name]:
            raise SqlRuleError(
                f"Row {number}: the {name} is longer than {limits[name]} characters."
            )
    key = "" if row.get("key") is None else str(row["key"])
    if len(key) > ALERT_KEY_MAX_LENGTH:
        raise SqlRuleError(
            f"Row {number}: the key is longer than {ALERT_KEY_MAX_LENGTH} characters."
        )
    data = row.get("data")
    if data is None or data == "":
        data = {}
    elif isinstance(data, str | bytes) and len(data) > limits["data"]:
        raise SqlRuleError(f"Row {number}: data is longer than {limits['data']} bytes.")
    elif isinstance(data, str | bytes):
        try:
            data = json.loads(data, parse_constant=jsonvalues.refuse_constant)  # no NaN
        except ValueError as exc:
            raise SqlRuleError(f"Row {number}: data is not valid JSON ({exc}).") from None
    if not isinstance(data, dict):
        raise SqlRuleError(
            f"Row {number}: data must be a JSON object such as "
            f'{{"bin": "A-01-03"}}, not {type(data).__name__}.'
        )
    return Alert(warehouse=warehouse_id, title=title, body=body, data=data, key=key)


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
