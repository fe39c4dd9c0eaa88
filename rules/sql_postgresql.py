"""The PostgreSQL sandbox of SQL rules: a connection of its own, as a role that can only read.

Rules never run on the application's connection: its role owns every table, and a READ ONLY
transaction does not stop functions such as pg_terminate_backend or pg_advisory_lock. Each run
opens a connection as RULES_SQL_ROLE (created and granted by `manage.py create_rules_sql_role`)
to the database of the RULES_SQL_DATABASE alias, runs one READ ONLY transaction with a
statement timeout, rolls it back and closes the connection, so nothing a query started (a
session-level advisory lock, a setting) outlives the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper

from .sql_policy import table_allowed

ROLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema")


class RulesRoleMissing(Exception):
    """SQL rules cannot run on PostgreSQL until the rules role is set up."""


def role_name() -> str:
    role = settings.RULES_SQL_ROLE
    if not ROLE_NAME.match(role):
        raise RulesRoleMissing(
            f"RULES_SQL_ROLE {role!r} is not a plain role name (lower case letters, digits, _)."
        )
    return role


def connection_params(connection: BaseDatabaseWrapper) -> dict[str, Any]:
    """psycopg.connect() arguments: the alias's database and server, the rules role's login."""
    role = role_name()
    password = settings.RULES_SQL_ROLE_PASSWORD
    if not password and connection.settings_dict["USER"] == role:
        password = connection.settings_dict["PASSWORD"]  # an alias configured with the role
    if not password:
        raise RulesRoleMissing(
            f"SQL rules on PostgreSQL run as the role {role}, and RULES_SQL_ROLE_PASSWORD is "
            f"not set: run `manage.py create_rules_sql_role` with it set (see docs/guide/rules.md)."
        )
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.update(user=role, password=password)
    params.setdefault("connect_timeout", 5)
    return params


@contextmanager
def read_only_cursor(connection: BaseDatabaseWrapper, timeout_ms: int) -> Iterator[Any]:
    """A cursor in a READ ONLY transaction of a new connection as the rules role; the
    transaction is rolled back and the connection closed however the block ends."""
    import psycopg

    raw = psycopg.connect(**connection_params(connection))
    try:
        with raw.cursor() as cursor:
            cursor.execute("SET TRANSACTION READ ONLY")
            # The session's bounds, for this transaction (all in one round trip); the role
            # carries them as defaults too (set_up_role), temp_file_limit only there: only a
            # superuser may set it.
            cursor.execute(
                "SELECT rolsuper, set_config('statement_timeout', %s, true), "
                "set_config('lock_timeout', %s, true), "
                "set_config('idle_in_transaction_session_timeout', %s, true), "
                "set_config('work_mem', %s, true) FROM pg_roles WHERE rolname = current_user",
                [
                    str(int(timeout_ms)),
                    str(min(int(timeout_ms), settings.RULES_SQL_LOCK_TIMEOUT_MS)),
                    str(int(timeout_ms) + 5000),
                    settings.RULES_SQL_WORK_MEM,
                ],
            )
            row = cursor.fetchone()
            if row is None or row[0]:
                raise RulesRoleMissing(
                    f"The role {raw.info.user} is a superuser: SQL rules refuse to run as one."
                )
            yield cursor
    finally:
        try:
            raw.rollback()
        finally:
            raw.close()


@dataclass
class RoleReport:
    lines: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.lines.append(line)


def set_up_role(
    connection: BaseDatabaseWrapper, *, password: str, revoke_functions: bool = False
) -> RoleReport:
    """Create or update the rules role and give it SELECT on the allowed tables, nothing else.

    Runs as the application's role (which needs CREATEROLE and owns the tables). Without a
    password the role is NOLOGIN (it exists, but nothing can connect as it).
    """
    role = role_name()
    quoted = connection.ops.quote_name(role)
    report = RoleReport()
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [role])
        row = cursor.fetchone()
        login = "LOGIN PASSWORD %s" if password else "NOLOGIN"
        params = [password] if password else []
        if row is None:
            cursor.execute(f"CREATE ROLE {quoted} {login} NOINHERIT", params)
            report.add(f"Created the role {role} ({'LOGIN' if password else 'NOLOGIN'}).")
        elif row[0]:
            raise RulesRoleMissing(f"The role {role} is a superuser; choose another name.")
        else:
            cursor.execute(f"ALTER ROLE {quoted} {login} NOINHERIT", params)
            report.add(f"Updated the role {role} ({'LOGIN' if password else 'NOLOGIN'}).")
        _role_defaults(connection, cursor, quoted, report)
        cursor.execute(
            "SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid "
            "JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = %s",
            [role],
        )
        for (group,) in cursor.fetchall():
            cursor.execute(f"REVOKE {connection.ops.quote_name(group)} FROM {quoted}")
            report.add(f"Revoked membership of {group}.")

        cursor.execute(
            "SELECT n.nspname, c.relname, "
            "has_table_privilege(c.oid, 'SELECT WITH GRANT OPTION') "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p') "
            "AND n.nspname <> ALL(%s) AND n.nspname NOT LIKE 'pg\\_%%' "
            "ORDER BY n.nspname, c.relname",
            [list(SYSTEM_SCHEMAS)],
        )
        tables = cursor.fetchall()
        schemas = sorted({schema for schema, _, _ in tables})
        for schema in schemas:
            qs = connection.ops.quote_name(schema)
            cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA {qs} FROM {quoted}")
            cursor.execute(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {qs} FROM {quoted}")
            cursor.execute(f"REVOKE ALL ON ALL FUNCTIONS IN SCHEMA {qs} FROM {quoted}")
            cursor.execute(f"GRANT USAGE ON SCHEMA {qs} TO {quoted}")
        report.add(f"Revoked every table privilege of {role} in {', '.join(schemas) or '-'}.")
        granted, denied, not_owned = [], [], []
        for schema, table, grantable in tables:
            if not table_allowed(table):
                denied.append(table)
            elif not grantable:
                not_owned.append(f"{schema}.{table}")
            else:
                name = f"{connection.ops.quote_name(schema)}.{connection.ops.quote_name(table)}"
                cursor.execute(f"GRANT SELECT ON {name} TO {quoted}")
                granted.append(table)
        report.add(f"Granted SELECT on {len(granted)} tables: {', '.join(granted) or '-'}.")
        report.add(f"Not granted (denied by the settings): {len(denied)} tables.")
        if not_owned:
            report.add(
                "Could not grant (this role may not grant them; ask their owner): "
                + ", ".join(not_owned)
            )
        cursor.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p') AND n.nspname <> ALL(%s) "
            "AND n.nspname NOT LIKE 'pg\\_%%' AND has_table_privilege(%s, c.oid, 'SELECT')",
            [list(SYSTEM_SCHEMAS), role],
        )
        leaks = [name for (name,) in cursor.fetchall() if not table_allowed(name)]
        if leaks:
            report.add(
                "WARNING: the role can still read denied tables through grants to PUBLIC "
                "(revoke them): " + ", ".join(leaks)
            )
        if revoke_functions:
            _revoke_functions(connection, cursor, report)
    return report


def _role_defaults(
    connection: BaseDatabaseWrapper, cursor: Any, quoted: str, report: RoleReport
) -> None:
    """The role's session defaults: read-only, time limits, memory, temporary files. Each run
    sets the first ones again; temp_file_limit only a superuser may set (reported if refused)."""
    from django.db import DatabaseError, transaction

    timeout_ms = int(settings.RULES_SQL_TIMEOUT_SECONDS * 1000)
    defaults = [
        ("default_transaction_read_only", "on"),
        ("statement_timeout", str(timeout_ms)),
        ("lock_timeout", str(settings.RULES_SQL_LOCK_TIMEOUT_MS)),
        ("idle_in_transaction_session_timeout", str(timeout_ms + 5000)),
        ("work_mem", settings.RULES_SQL_WORK_MEM),
        ("temp_file_limit", settings.RULES_SQL_TEMP_FILE_LIMIT),
    ]
    done, refused = [], []
    for name, value in defaults:
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute(f"ALTER ROLE {quoted} SET {name} = %s", [value])
            done.append(f"{name}={value}")
        except DatabaseError:
            refused.append(name)
    report.add(f"Session defaults of the role: {', '.join(done) or '-'}.")
    if refused:
        report.add(
            "Not set (only a superuser may; ask one to run ALTER ROLE ... SET): "
            + ", ".join(refused)
        )


def _revoke_functions(connection: BaseDatabaseWrapper, cursor: Any, report: RoleReport) -> None:
    """REVOKE EXECUTE FROM PUBLIC on the denied pg_catalog functions that exist, one by one:
    only their owner (a superuser) may, so each failure is reported, not fatal."""
    from django.db import DatabaseError, transaction

    from .sql_policy import function_denied

    cursor.execute(
        "SELECT p.oid::regprocedure::text, p.proname FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'pg_catalog'"
    )
    done, refused = 0, 0
    for signature, name in cursor.fetchall():
        if not function_denied(name):
            continue
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute(f"REVOKE EXECUTE ON FUNCTION {signature} FROM PUBLIC")
            done += 1
        except DatabaseError:
            refused += 1
    report.add(
        f"Revoked EXECUTE from PUBLIC on {done} denied functions"
        + (f"; {refused} refused (only a superuser may)." if refused else ".")
    )
