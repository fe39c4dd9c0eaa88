"""`manage.py create_rules_sql_role`: the PostgreSQL role SQL rules run as, with SELECT on the
allowed tables only. Run it after every migration that adds tables (it is idempotent)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connections, transaction

from rules import sql_postgresql


class Command(BaseCommand):
    help = (
        "Create or update the PostgreSQL role SQL rules run as (RULES_SQL_ROLE), LOGIN with "
        "RULES_SQL_ROLE_PASSWORD (NOLOGIN without one), and grant it SELECT on the tables "
        "RULES_SQL_ALLOWED_TABLES / RULES_SQL_DENIED_TABLES allow, revoking everything else. "
        "Needs a database user with CREATEROLE that owns the tables."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--database",
            default=settings.RULES_SQL_DATABASE,
            help="Database alias (default: RULES_SQL_DATABASE); its user runs the grants.",
        )
        parser.add_argument(
            "--revoke-functions",
            action="store_true",
            help="Also REVOKE EXECUTE FROM PUBLIC on the denied pg_catalog functions "
            "(pg_terminate_backend, pg_advisory_lock, ...). Needs a superuser; affects every "
            "role of this database.",
        )

    def handle(self, *args: Any, database: str, revoke_functions: bool, **options: Any) -> None:
        connection = connections[database]
        if connection.vendor != "postgresql":
            raise CommandError(
                f"The database {database!r} is {connection.vendor}, not PostgreSQL: SQL rules "
                f"on SQLite are confined by an authorizer and need no role."
            )
        password = settings.RULES_SQL_ROLE_PASSWORD
        try:
            with transaction.atomic(using=database):
                report = sql_postgresql.set_up_role(
                    connection, password=password, revoke_functions=revoke_functions
                )
        except sql_postgresql.RulesRoleMissing as exc:
            raise CommandError(str(exc)) from exc
        except DatabaseError as exc:
            raise CommandError(
                f"Could not set up the role {settings.RULES_SQL_ROLE}: {exc}".strip()
            ) from exc
        for line in report.lines:
            self.stdout.write(line)
        if not password:
            self.stdout.write(
                self.style.WARNING(
                    "RULES_SQL_ROLE_PASSWORD is not set: the role cannot log in, so SQL rules "
                    "will not run on PostgreSQL until it is set and this command runs again."
                )
            )
