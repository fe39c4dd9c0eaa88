"""PostgreSQL: the role SQL rules connect as, set up once per test process like a deployment
does (`manage.py create_rules_sql_role`), and the mark for tests whose rules read test data."""

from __future__ import annotations

import fcntl
import io
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

ON_POSTGRESQL = connection.vendor == "postgresql"

# On PostgreSQL rules read through a connection of their own, which sees committed data only.
RULES_READ_COMMITTED_DATA = pytest.mark.django_db(transaction=ON_POSTGRESQL)


@pytest.fixture(scope="session")
def rules_sql_role(django_db_setup, django_db_blocker) -> str:
    """The command's output (empty on SQLite, where rules need no role)."""
    if not ON_POSTGRESQL:
        return ""
    out = io.StringIO()
    with django_db_blocker.unblock(), _cluster_wide_lock():
        call_command("create_rules_sql_role", stdout=out)
    return out.getvalue()


@contextmanager
def _cluster_wide_lock() -> Iterator[None]:
    # Roles belong to the whole cluster: the xdist workers would otherwise create and alter
    # the same role at the same time ("tuple concurrently updated").
    path = Path(tempfile.gettempdir()) / "wms-rules-sql-role.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
