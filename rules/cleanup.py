"""Nothing left behind forever by rules that no longer exist (a Python rule removed from the
code, a deleted SQL rule; SPEC.md section 10).

Their de-duplication marks and raised alerts are warehouse keys: the notifications orphan sweep
walks those and asks `existing_rule_ids` which rules still exist (added in apps.py). Their last
runs are one hash outside any warehouse: `sweep_orphans` (Celery beat, `manage.py
sweep_orphans`) goes through it in bounded HSCAN pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from . import sources, store
from .models import SqlRule


@dataclass(frozen=True)
class RulesCleanupReport:
    last_runs: int = 0  # last-run entries of rules that no longer exist

    def __str__(self) -> str:
        return f"removed {self.last_runs} last runs of deleted rules"


def known_rule_ids() -> set[str]:
    """Ids of every rule that exists: Python rules in the code, SQL rules in the database."""
    python = {f"py:{rule.name}" for rule in sources.registry.all()}
    return python | {f"sql:{pk}" for pk in SqlRule.objects.values_list("pk", flat=True)}


def existing_rule_ids(rule_ids: set[str]) -> set[str]:
    """Which of these rule ids name a rule that exists (the notifications sweep's owner check)."""
    return rule_ids & known_rule_ids()


def sweep_orphans(*, batch: int | None = None) -> RulesCleanupReport:
    """Drop the last runs of rules that no longer exist (`batch` entries an HSCAN call)."""
    batch = batch or settings.ORPHAN_SWEEP_BATCH
    known = known_rule_ids()
    forgotten = 0
    cursor = 0
    while True:
        cursor, rule_ids = store.scan_last_runs(cursor=cursor, count=batch)
        forgotten += store.forget_last_runs([r for r in rule_ids if r not in known])
        if cursor == 0:
            return RulesCleanupReport(last_runs=forgotten)
