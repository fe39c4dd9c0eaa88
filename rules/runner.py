"""Running rules: collecting their alerts, de-duplicating, publishing, recording the run.

Which rules there are, and which are due, is sources.py's job.
"""

# The Celery tasks, the `run_rules` command and the admin all come here (dry runs of SQL rules
# through dry_runs.py, which records them); none of them holds logic.

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Sequence

from django.conf import settings

from config import timestamps
from config.redis import REDIS_UNAVAILABLE
from notifications.services import PublishError
from subscriptions.models import MessageType, Warehouse
from subscriptions.services import resync_pairs, subscribers_from_database
from subscriptions.store import Pair

from . import alerts as alerts_lifecycle
from . import sql, store
from .base import Alert
from .domain import AlertOutcome, AlertStatus, RuleInfo, RuleRun
from .sources import RunnableRule, due_rules

logger = logging.getLogger(__name__)


def run_rule(rule: RunnableRule, *, dry_run: bool = False) -> RuleRun:
    """Run one rule now: collect, de-duplicate, publish (or, dry, only say what would be sent).

    The rule's own failures do not raise: they come back in `RuleRun.error` and, for a real
    run, in the rule's record (last_error of an SQL rule; the log for a Python rule). A dry
    run writes nothing anywhere.
    """
    info = rule.info
    started = timestamps.now_ms()
    clock = time.perf_counter()
    token = None
    alerts: list[Alert] | None = None
    outcomes: tuple[AlertOutcome, ...] = ()
    error = warning = ""
    try:
        if not dry_run:
            token = store.acquire_lock(info.id, ttl_seconds=settings.RULES_LOCK_SECONDS)
            if token is None:
                return RuleRun(
                    rule=info,
                    started_ms=started,
                    skipped="another run of this rule is still in progress",
                )
        alerts, warning = rule.collect()
        outcomes = (
            _preview(info, alerts, at_ms=started)
            if dry_run
            else _deliver(info, alerts, at_ms=started)
        )
    except sql.SqlRuleError as exc:
        error = str(exc)
        logger.warning("Rule %s failed: %s", info.name, error)
    except Exception as exc:
        error = _describe(exc)
        logger.exception("Rule %s failed", info.name)
    finally:
        if token is not None:
            _release(info.id, token)
    run = RuleRun(
        rule=info,
        started_ms=started,
        elapsed_ms=(time.perf_counter() - clock) * 1000,
        dry_run=dry_run,
        alert_count=None if alerts is None else len(alerts),
        outcomes=outcomes,
        error=error,
        warning=warning,
    )
    if not dry_run:
        rule.record(run)
    return run


def run_rules(rules: Sequence[RunnableRule], *, dry_run: bool = False) -> list[RuleRun]:
    """Run each rule; one that fails (even in recording its run) does not stop the others."""
    runs = []
    for rule in rules:
        try:
            runs.append(run_rule(rule, dry_run=dry_run))
        except Exception as exc:
            logger.exception("Running rule %s failed", rule.info.name)
            runs.append(
                RuleRun(
                    rule=rule.info,
                    started_ms=timestamps.now_ms(),
                    dry_run=dry_run,
                    error=_describe(exc),
                )
            )
    return runs


def run_due_rules(*, dry_run: bool = False) -> list[RuleRun]:
    """What Celery beat runs: every active rule that is due."""
    return run_rules(due_rules(), dry_run=dry_run)


def _unique(alerts: Sequence[Alert]) -> tuple[dict[int, list[str]], set[int]]:
    """Alert keys per warehouse, and the positions of alerts repeating an earlier one's key."""
    keys: dict[int, list[str]] = defaultdict(list)
    seen: set[tuple[int, str]] = set()
    repeats = set()
    for position, alert in enumerate(alerts):
        pair = (alert.warehouse_id, alert.key)
        if pair in seen:
            repeats.add(position)
        else:
            seen.add(pair)
            keys[alert.warehouse_id].append(alert.key)
    return keys, repeats


def _deliver(info: RuleInfo, alerts: Sequence[Alert], *, at_ms: int) -> tuple[AlertOutcome, ...]:
    keys, repeats = _unique(alerts)
    # Every warehouse is reconciled, also those where the rule yields nothing any more: that
    # is how their conditions count as cleared.
    wanted: dict[int, list[str]] = {
        warehouse_id: [] for warehouse_id in Warehouse.objects.values_list("id", flat=True)
    }
    wanted.update(keys)
    due = store.claim_due(
        info.id,
        now_ms=at_ms,
        cooldown_seconds=info.cooldown_seconds,
        abandoned_seconds=int(settings.RULES_LOCK_SECONDS),
        keys_by_warehouse=wanted,
    )
    alerts_lifecycle.resolve_cleared(info, wanted)
    audience = _Audience(info.message_type, [w for w, due_keys in due.items() if due_keys])
    # Claims not yet settled (confirmed or dropped): if Redis fails half-way they are dropped,
    # so the next run sends them instead of waiting for them to lapse.
    unsettled = {warehouse_id: set(due_keys) for warehouse_id, due_keys in due.items()}
    outcomes = []
    try:
        for position, alert in enumerate(alerts):
            if position in repeats or alert.key not in due.get(alert.warehouse_id, ()):
                outcomes.append(AlertOutcome(alert, AlertStatus.DUPLICATE))
                continue
            try:
                result = alerts_lifecycle.raise_alert(info, alert)
            except REDIS_UNAVAILABLE:
                raise  # the rest would fail too; their claims are dropped below
            except Exception as exc:
                outcome = AlertOutcome(alert, AlertStatus.FAILED, error=_describe(exc))
            else:
                # A re-raise (or a flapping key's quiet one) marks the inboxes the alert
                # reached when it was published.
                missed = (
                    []
                    if result.reraised or result.flapping
                    else audience.missed(alert.warehouse_id, result.subscribers)
                )
                if missed:
                    alerts_lifecycle.withdraw(info, alert, result.id)
                    outcome = AlertOutcome(
                        alert,
                        AlertStatus.FAILED,
                        recipients=result.recipients,
                        error=(
                            f"reached {result.recipients} inboxes but not {', '.join(missed)}, "
                            f"subscribed in the database; sent again on the next run"
                        ),
                    )
                else:
                    outcome = AlertOutcome(alert, AlertStatus.SENT, recipients=result.recipients)
            # Settle each alert as soon as it is published: a worker killed later in the run
            # must not leave it claimed-but-unconfirmed, to be sent a second time.
            if outcome.status is AlertStatus.SENT:
                store.confirm_sent(
                    info.id,
                    alert.warehouse_id,
                    [alert.key],
                    now_ms=at_ms,
                    cooldown_seconds=info.cooldown_seconds,
                )
            else:
                store.unclaim(info.id, alert.warehouse_id, [alert.key])
            unsettled[alert.warehouse_id].discard(alert.key)
            outcomes.append(outcome)
    finally:
        _drop_claims(info.id, unsettled)
    return tuple(outcomes)


class _Audience:
    """Who the database says subscribes to the rule's type, per warehouse: an alert counts as
    sent only once it reached all of them (a Redis that lost subscribers must not swallow it)."""

    def __init__(self, message_type: str, warehouse_ids: Sequence[int]) -> None:
        self.type_id = (
            MessageType.objects.filter(code=message_type).values_list("id", flat=True).first()
        )
        self.expected: dict[int, set[str]] = {}
        if self.type_id is not None and warehouse_ids:
            self.expected = {
                pair.warehouse_id: members
                for pair, members in subscribers_from_database(
                    Pair(w, self.type_id) for w in warehouse_ids
                ).items()
            }

    def missed(self, warehouse_id: int, reached: Sequence[str]) -> list[str]:
        """Subscribers the database lists that the delivery did not reach (sorted)."""
        missed = self.expected.get(warehouse_id, set()) - set(reached)
        if missed and self.type_id is not None:
            # Read again: a subscription removed since the run began is no miss.
            pair = Pair(warehouse_id, self.type_id)
            self.expected[warehouse_id] = subscribers_from_database([pair])[pair]
            missed = self.expected[warehouse_id] - set(reached)
            if missed:
                logger.warning("Redis missed subscribers %s of %s: repairing", missed, pair)
                resync_pairs([pair])
        return sorted(missed)


def _drop_claims(rule_id: str, claims: dict[int, set[str]]) -> None:
    try:
        for warehouse_id, alert_keys in claims.items():
            store.unclaim(rule_id, warehouse_id, sorted(alert_keys))
    except REDIS_UNAVAILABLE:
        logger.warning("Could not drop the claims of rule %s; they lapse by themselves", rule_id)


def _preview(info: RuleInfo, alerts: Sequence[Alert], *, at_ms: int) -> tuple[AlertOutcome, ...]:
    keys, repeats = _unique(alerts)
    try:
        marks = {
            warehouse_id: store.marks(info.id, warehouse_id, warehouse_keys)
            for warehouse_id, warehouse_keys in keys.items()
        }
    except REDIS_UNAVAILABLE:
        marks = {}  # still worth showing the alerts; none can be told apart as already sent
    outcomes = []
    for position, alert in enumerate(alerts):
        mark = marks.get(alert.warehouse_id, {}).get(alert.key)
        fresh = position not in repeats and _is_due(mark, info.cooldown_seconds, at_ms)
        outcomes.append(
            AlertOutcome(alert, AlertStatus.WOULD_SEND if fresh else AlertStatus.DUPLICATE)
        )
    return tuple(outcomes)


def _is_due(mark: int | None, cooldown_seconds: int, at_ms: int) -> bool:
    """The rule of lua/dedup.lua, for dry runs, which must not claim anything."""
    if mark is None or cooldown_seconds <= 0:
        return True
    if mark < 0:
        return at_ms + mark >= int(settings.RULES_LOCK_SECONDS) * 1000
    return at_ms - mark >= cooldown_seconds * 1000


def _release(rule_id: str, token: str) -> None:
    try:
        store.release_lock(rule_id, token)
    except REDIS_UNAVAILABLE:
        logger.warning("Could not release the lock of rule %s; it lapses by itself", rule_id)


def _describe(exc: Exception) -> str:
    if isinstance(exc, PublishError):
        return exc.message
    if isinstance(exc, sql.SqlRuleError):
        return str(exc)
    if isinstance(exc, REDIS_UNAVAILABLE):
        return f"Redis is unavailable: {exc}"
    return f"{type(exc).__name__}: {exc}"
