"""Redis key names of rules: the only place that builds them. Stored keys outlive deploys:
tests/rules/test_keys.py pins these exact strings.

A rule id is "py:<rule name>" or "sql:<SqlRule pk>" (names match base.RULE_NAME: no braces, so
they never form a hash tag of their own). The de-duplication marks and raised alerts are
warehouse keys (hash tag `{wh:<id>}`, see subscriptions.keys): the notifications orphan sweep
finds them there and asks this app which rules still exist (cleanup.py).
"""

from django.conf import settings

from subscriptions.keys import warehouse_prefix


def rule_sent(warehouse_id: int, rule_id: str) -> str:
    """Hash alert key -> ms it was last sent, for one rule in one warehouse (de-duplication)."""
    return f"{warehouse_prefix(warehouse_id)}:rule:{rule_id}:sent"


def rule_alerts(warehouse_id: int, rule_id: str) -> str:
    """Hash alert key -> id of the notification raised for it that may still be open, so a
    reminder re-raises it and a cleared condition resolves it."""
    return f"{warehouse_prefix(warehouse_id)}:rule:{rule_id}:alerts"


def rule_lock(rule_id: str) -> str:
    """String: the token of the run holding the rule, so overlapping beat ticks skip it."""
    return f"{settings.WMS_REDIS_PREFIX}:rules:{rule_id}:lock"


def rule_last_runs() -> str:
    """Hash rule id -> ms its last run started: the schedule of Python rules (SQL rules keep
    theirs in the database as `last_run_at`)."""
    return f"{settings.WMS_REDIS_PREFIX}:rules:last_run"
