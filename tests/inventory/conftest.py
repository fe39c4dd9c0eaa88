"""The demo ships an SQL rule: on PostgreSQL it runs as the rules' role, set up once."""

from __future__ import annotations

import pytest

from tests.rules_sql_role import rules_sql_role  # noqa: F401  (a fixture)


@pytest.fixture(autouse=True)
def _rules_sql_role(request: pytest.FixtureRequest) -> None:
    """PostgreSQL: SQL rules run as their own role, set up once per test process."""
    request.getfixturevalue("rules_sql_role")
