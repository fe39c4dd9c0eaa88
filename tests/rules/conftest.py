"""Fixtures for rule tests: a registry of only the test's rules, a subscribed user, an inbox."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import pytest

from rules import Alert, Rule, RuleRegistry, sources, tasks
from rules.domain import DryRunStatus
from rules.models import SqlRule, SqlRuleDryRun
from subscriptions.models import Subscription
from tests.rules_sql_role import rules_sql_role  # noqa: F401  (a fixture)

OK_QUERY = (
    "SELECT warehouse_id, 'Replenish ' || code AS title, 'Stock is ' || stock AS body, "
    "code AS key FROM inventory_bin WHERE stock < 0"
)


@pytest.fixture(autouse=True)
def _rules_sql_role(request: pytest.FixtureRequest) -> None:
    """PostgreSQL: SQL rules run as their own role, set up once per test process."""
    request.getfixturevalue("rules_sql_role")


@pytest.fixture
def rules_registry(monkeypatch) -> RuleRegistry:
    """The runner sees only rules the test registers (the shipped ones are set aside)."""
    fresh = RuleRegistry(discover=False)
    monkeypatch.setattr(sources, "registry", fresh)
    return fresh


class CurrentAlertsRule(Rule):
    """A test's rule: its alerts are whatever `current` holds when it runs."""

    current: ClassVar[list[Alert]] = []


@pytest.fixture
def make_rule(rules_registry, rep_notice) -> Callable[..., type[Rule]]:
    """Register a Python rule whose alerts are whatever `rule.current` holds (a list)."""

    def make(
        name: str = "shortages",
        alerts: Iterable[Alert] = (),
        *,
        message_type: str = "REP_NOTICE",
        interval: int = 60,
        cooldown: int | None = None,
        fails_with: Exception | None = None,
    ) -> type[Rule]:
        def yield_current(self: CurrentAlertsRule) -> list[Alert]:
            if fails_with is not None:
                raise fails_with
            return list(self.current)

        attrs: dict[str, Any] = {
            "name": name,
            "message_type": message_type,
            "interval_seconds": interval,
            "cooldown_seconds": cooldown,
            "current": list(alerts),
            "alerts": yield_current,
        }
        return rules_registry.register(type(f"Rule_{name}", (CurrentAlertsRule,), attrs))

    return make


@pytest.fixture
def rita(db, warehouse, rep_notice, role, make_user, django_capture_on_commit_callbacks):
    """A user of the role that receives REP_NOTICE in SH01 (mirrored into Redis)."""
    with django_capture_on_commit_callbacks(execute=True):
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role)


@pytest.fixture
def inbox(client_for) -> Callable[..., list[dict]]:
    """What a user sees through the API: GET /api/v1/notifications/?warehouse=<id>."""

    def read(user, warehouse) -> list[dict]:
        response = client_for(user).get("/api/v1/notifications/", {"warehouse": warehouse.pk})
        assert response.status_code == 200, response.content
        return response.json()["results"]

    return read


@pytest.fixture
def sql_rule(db, rep_notice) -> Callable[..., SqlRule]:
    """Create an SQL rule (validated like the admin does, unless `clean=False`)."""

    def make(
        query: str = OK_QUERY, *, name: str = "negative stock", clean: bool = True, **fields: Any
    ) -> SqlRule:
        # Active, as if its dry run had passed, unless the test says otherwise.
        fields.setdefault("is_active", True)
        if fields["is_active"]:
            fields.setdefault("dry_run_passed_query", query)
        rule = SqlRule(name=name, message_type=rep_notice, query=query, **fields)
        if clean:
            rule.full_clean()
        rule.save()
        return rule

    return make


@pytest.fixture
def worker_runs_dry_runs(db) -> Callable[[], int]:
    """Do what a worker consuming the rules queue does: run every pending dry run's task, here
    (tests with a real worker: test_dry_run_worker.py). Returns how many ran."""

    def run() -> int:
        pending = SqlRuleDryRun.objects.filter(status=DryRunStatus.PENDING).order_by("pk")
        ids = list(pending.values_list("pk", flat=True))
        for pk in ids:
            tasks.dry_run_sql_rule(pk)
        return len(ids)

    return run


def alert(warehouse, key: str = "A-01-03", qty: int = -12, **overrides: Any) -> Alert:
    values: dict[str, Any] = {
        "warehouse": warehouse,
        "title": f"Replenish {key}",
        "body": f"Stock is {qty} after wave 8812",
        "data": {"bin": key, "qty": qty},
        "key": key,
    }
    values.update(overrides)
    return Alert(**values)
