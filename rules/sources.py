"""Where rules come from: Python rules in the registry, SQL rules in the database, seen alike.

The runner (runner.py) only runs what this module hands it: `all_rules()`, `due_rules()`,
`find_rule()` by name, or `sql_rules()` of chosen rows (the admin).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from django.conf import settings

from config import timestamps

from . import sql, store
from .base import Alert, Rule, registry
from .domain import RuleInfo, RuleKind, RuleRun
from .models import SqlRule

# `registry` too: the runner reads the Python rules through this module's name for it (tests
# swap it here).
__all__ = [
    "PythonRule",
    "RuleNotFound",
    "RunnableRule",
    "SqlRuleRunnable",
    "all_rules",
    "due_rules",
    "find_rule",
    "python_rules",
    "registry",
    "sql_rules",
]


class RunnableRule(ABC):
    """A rule as the runner sees it: its info, how to collect its alerts, where to record a run."""

    info: RuleInfo

    @abstractmethod
    def collect(self) -> tuple[list[Alert], str]:
        """The rule's alerts now, and a warning for people (or "")."""

    @abstractmethod
    def record(self, run: RuleRun) -> None:
        """Remember the run (its start is the rule's last run)."""


class PythonRule(RunnableRule):
    def __init__(self, rule: type[Rule], *, last_run_ms: int | None) -> None:
        self.rule = rule
        self.info = RuleInfo(
            id=f"py:{rule.name}",
            name=rule.name,
            kind=RuleKind.PYTHON,
            message_type=rule.message_type,
            interval_seconds=rule.interval_seconds,
            cooldown_seconds=rule.effective_cooldown(),
            is_active=rule.is_enabled(),
            last_run_ms=last_run_ms,
            description=rule.description or (rule.__doc__ or "").strip(),
        )

    def collect(self) -> tuple[list[Alert], str]:
        alerts = list(self.rule().alerts())
        for alert in alerts:
            if not isinstance(alert, Alert):
                raise TypeError(f"alerts() yielded {type(alert).__name__}, not an Alert.")
        return alerts, ""

    def record(self, run: RuleRun) -> None:
        store.set_last_run(self.info.id, run.started_ms)


class SqlRuleRunnable(RunnableRule):
    def __init__(self, rule: SqlRule) -> None:
        self.rule = rule
        last_run = rule.last_run_at
        self.info = RuleInfo(
            id=rule.rule_id,
            name=rule.name,
            kind=RuleKind.SQL,
            message_type=rule.message_type.code,
            interval_seconds=rule.interval_seconds,
            cooldown_seconds=int(settings.RULES_DEDUP_COOLDOWN_SECONDS),
            # Never a query no dry run has passed, however the flag was set.
            is_active=rule.is_active and rule.dry_run_passed,
            last_run_ms=None if last_run is None else int(last_run.timestamp() * 1000),
            description=rule.description,
        )

    def collect(self) -> tuple[list[Alert], str]:
        result = sql.run_query(self.rule.query)
        warning = ""
        if result.truncated:
            warning = (
                f"The query returned more than {len(result.rows)} rows; only the first "
                f"{len(result.rows)} were used (RULES_SQL_MAX_ROWS)."
            )
        return sql.rows_to_alerts(result), warning

    def record(self, run: RuleRun) -> None:
        # update(), not save(): an admin editing the rule meanwhile keeps their changes.
        SqlRule.objects.filter(pk=self.rule.pk).update(
            last_run_at=timestamps.ms_to_datetime(run.started_ms),
            last_result_count=run.alert_count,
            last_error=run.problem(),
        )


class RuleNotFound(LookupError):
    """No rule has the name asked for, or a Python and an SQL rule share it."""


def python_rules() -> list[PythonRule]:
    classes = registry.all()
    last = store.last_runs([f"py:{rule.name}" for rule in classes])
    return [PythonRule(rule, last_run_ms=last.get(f"py:{rule.name}")) for rule in classes]


def sql_rules(rules: Iterable[SqlRule] | None = None) -> list[SqlRuleRunnable]:
    if rules is None:
        rules = SqlRule.objects.select_related("message_type")
    return [SqlRuleRunnable(rule) for rule in rules]


def all_rules() -> list[RunnableRule]:
    return [*python_rules(), *sql_rules()]


def due_rules(*, at_ms: int | None = None) -> list[RunnableRule]:
    """Active rules whose interval has passed since their last run (or that never ran)."""
    at = timestamps.now_ms() if at_ms is None else at_ms
    return [rule for rule in all_rules() if rule.info.is_active and rule.info.is_due(at)]


def find_rule(name: str) -> RunnableRule:
    """A rule by name; `py:<name>` or `sql:<name>` when a Python and an SQL rule share it."""
    kind, _, bare = name.partition(":")
    if kind in ("py", "sql") and bare:
        candidates: list[RunnableRule] = list(python_rules()) if kind == "py" else list(sql_rules())
        name = bare
    else:
        candidates = all_rules()
    found = [rule for rule in candidates if rule.info.name == name]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise RuleNotFound(
            f"A Python rule and an SQL rule are both named {name!r}: say py:{name} or sql:{name}."
        )
    known = ", ".join(sorted(rule.info.name for rule in all_rules())) or "none"
    raise RuleNotFound(f"No rule is named {name!r}. Rules: {known}.")
