"""What rule runs produce: frozen results of one run, its alerts' fates, and rule facts."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .base import Alert

# Beat ticks and run start times jitter by milliseconds: without this slack a rule whose
# interval equals the tick would be found "not yet due" by a hair and run every other tick.
DUE_SLACK_MS = 1000


class RuleKind(StrEnum):
    PYTHON = "python"
    SQL = "sql"


class DryRunStatus(StrEnum):
    """Where a recorded dry run of an SQL rule stands (models.SqlRuleDryRun)."""

    PENDING = "pending"  # recorded, waiting for a worker
    RUNNING = "running"  # a worker (or run_rules) took it
    PASSED = "passed"  # the query ran without a problem: the rule may be activated
    FAILED = "failed"  # it failed, or its worker did not finish in time

    @classmethod
    def unfinished(cls) -> tuple[DryRunStatus, ...]:
        return (cls.PENDING, cls.RUNNING)


class AlertStatus(StrEnum):
    SENT = "sent"
    DUPLICATE = "duplicate"  # already notified, and its condition persists
    FAILED = "failed"
    WOULD_SEND = "would send"  # dry run


@dataclass(frozen=True)
class AlertOutcome:
    alert: Alert
    status: AlertStatus
    recipients: int = 0
    error: str = ""


@dataclass(frozen=True)
class RuleInfo:
    """What the runner needs to know of a rule, Python or SQL."""

    id: str  # "py:<name>" or "sql:<pk>": names its state in Redis
    name: str
    kind: RuleKind
    message_type: str
    interval_seconds: int
    cooldown_seconds: int
    is_active: bool
    last_run_ms: int | None
    description: str = ""

    def is_due(self, at_ms: int) -> bool:
        """A rule that never ran is due; otherwise once its interval has passed."""
        if self.last_run_ms is None:
            return True
        return at_ms - self.last_run_ms >= self.interval_seconds * 1000 - DUE_SLACK_MS


@dataclass(frozen=True)
class RuleRun:
    """The result of running one rule once."""

    rule: RuleInfo
    started_ms: int
    elapsed_ms: float = 0.0
    dry_run: bool = False
    alert_count: int | None = None  # None: the rule failed before yielding its alerts
    outcomes: tuple[AlertOutcome, ...] = ()
    error: str = ""
    warning: str = ""
    skipped: str = ""

    def count(self, status: AlertStatus) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def sent(self) -> int:
        return self.count(AlertStatus.SENT)

    @property
    def duplicates(self) -> int:
        return self.count(AlertStatus.DUPLICATE)

    @property
    def failed(self) -> int:
        return self.count(AlertStatus.FAILED)

    @property
    def would_send(self) -> int:
        return self.count(AlertStatus.WOULD_SEND)

    @property
    def recipients(self) -> int:
        return sum(o.recipients for o in self.outcomes)

    @property
    def ok(self) -> bool:
        return not self.error and not self.failed

    def problem(self) -> str:
        """What went wrong, in one message for people (empty when nothing did)."""
        parts = [self.error] if self.error else []
        if self.failed:
            errors = list(dict.fromkeys(o.error for o in self.outcomes if o.error))
            parts.append(
                f"{self.failed} of {len(self.outcomes)} alerts could not be sent: "
                + "; ".join(errors[:3])
            )
        if self.warning:
            parts.append(self.warning)
        return " ".join(parts)

    def summary(self) -> str:
        """One line: the rule, and what happened to its alerts."""
        head = f"{self.rule.name} ({self.rule.kind}, {self.rule.message_type})"
        if self.skipped:
            return f"{head}: skipped, {self.skipped}"
        if self.alert_count is None:
            return f"{head}: FAILED: {self.error} [{self.elapsed_ms:.0f} ms]"
        if self.dry_run:
            counts = f"{self.would_send} would be sent, {self.duplicates} already notified"
        else:
            counts = (
                f"{self.sent} sent to {self.recipients} inboxes, {self.duplicates} "
                f"already notified, {self.failed} failed"
            )
        text = f"{head}: {plural(self.alert_count, 'alert')}: {counts} [{self.elapsed_ms:.0f} ms]"
        if self.error:
            text += f"; FAILED: {self.error}"
        if self.warning:
            text += f"; {self.warning}"
        return text


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
