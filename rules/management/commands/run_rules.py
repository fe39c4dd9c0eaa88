"""`manage.py run_rules [--rule NAME] [--dry-run]`: run the due rules, or one rule, by hand.

A dry run of an SQL rule is recorded exactly as the admin's Dry run is (rules.dry_runs), so a
rule whose dry run passed here can be activated (SPEC 4); it runs in this process, not in a
worker.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config import timestamps
from rules import dry_runs, runner, sources
from rules.domain import AlertStatus, DryRunStatus, RuleRun, plural
from rules.models import SqlRuleDryRun
from subscriptions.models import Warehouse


class Command(BaseCommand):
    help = (
        "Run every active rule that is due (a rule that never ran is due), or with --rule "
        "one rule now, active or not. --dry-run prints each alert and sends nothing; the dry "
        "run of an SQL rule is recorded as the admin's is (a pass lets the rule be activated)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--rule",
            metavar="NAME",
            help="Run this rule now (Python rule name or SQL rule name; "
            "py:NAME / sql:NAME when both exist).",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Print the alerts that would be sent and send nothing. The dry run of an SQL "
            "rule is recorded as the admin's Dry run is: once it passed, the rule can be "
            "activated.",
        )

    def handle(self, *args: Any, rule: str | None, dry_run: bool, **options: Any) -> None:
        if rule:
            try:
                rules = [sources.find_rule(rule)]
            except sources.RuleNotFound as exc:
                raise CommandError(str(exc)) from exc
        else:
            rules = sources.due_rules()
            if not rules:
                self.stdout.write("No rule is due.")
                return
        verb = "Dry run of" if dry_run else "Running"
        which = "" if rule else "due "
        self.stdout.write(f"{verb} {plural(len(rules), which + 'rule')}:")
        self.warehouse_codes: dict[int, str] = {}
        runs = []
        for each in rules:  # each reported as soon as it ran
            if dry_run and isinstance(each, sources.SqlRuleRunnable):
                run = self._recorded_dry_run(each)
            else:
                (run,) = runner.run_rules([each], dry_run=dry_run)
                self._report(run, verbose=dry_run or options["verbosity"] > 1)
            runs.append(run)
        self._total(runs, dry_run=dry_run)

    def _recorded_dry_run(self, rule: sources.SqlRuleRunnable) -> RuleRun:
        """The dry run of an SQL rule, recorded as the admin's is, with its progress."""
        name = rule.info.name
        try:
            recorded = dry_runs.dry_run_here(
                rule=rule.rule, progress=lambda text: self.stdout.write(f"- {name}: {text}...")
            )
        except Exception as exc:  # one rule's failure does not stop the others (run_rules)
            run = RuleRun(
                rule=rule.info,
                started_ms=timestamps.now_ms(),
                dry_run=True,
                error=f"Could not record the dry run: {type(exc).__name__}: {exc}",
            )
            self._report(run, verbose=True)
            return run
        run = dry_runs.dry_run_result(recorded)
        self._report(run, verbose=True)
        self._verdict(recorded)
        return run

    def _verdict(self, recorded: SqlRuleDryRun) -> None:
        if recorded.status == DryRunStatus.PASSED:
            self.stdout.write(
                self.style.SUCCESS(
                    f"  Dry run {recorded.pk} passed and is recorded: the rule can be activated "
                    f"with this query."
                )
            )
        else:
            self.stdout.write(
                self.style.WARNING(
                    f"  Dry run {recorded.pk} failed and is recorded: the rule cannot be "
                    f"activated with this query."
                )
            )

    def _report(self, run: RuleRun, *, verbose: bool) -> None:
        missing = {o.alert.warehouse_id for o in run.outcomes} - self.warehouse_codes.keys()
        if missing:
            found = Warehouse.objects.filter(pk__in=missing).values_list("pk", "code")
            self.warehouse_codes.update(found)
        style = self.style.SUCCESS if run.ok and not run.skipped else self.style.WARNING
        if run.error:
            style = self.style.ERROR
        self.stdout.write(style(f"- {run.summary()}"))
        for outcome in run.outcomes:
            if not verbose and outcome.status != AlertStatus.FAILED:
                continue
            alert = outcome.alert
            warehouse = self.warehouse_codes.get(alert.warehouse_id, f"#{alert.warehouse_id}")
            line = (
                f"    {outcome.status:<10}  {warehouse}  [{alert.key}]  "
                f"{alert.title} | {alert.body}"
            )
            if alert.data:
                line += f"  {json.dumps(alert.data, ensure_ascii=False)}"
            if outcome.status == AlertStatus.SENT:
                line += f"  -> {outcome.recipients} inboxes"
            if outcome.error:
                line += f"  ({outcome.error})"
            self.stdout.write(line)

    def _total(self, runs: list[RuleRun], *, dry_run: bool) -> None:
        alerts = sum(run.alert_count or 0 for run in runs)
        failed_rules = [run for run in runs if run.error]
        if dry_run:
            text = (
                f"Dry run: {plural(len(runs), 'rule')}, {plural(alerts, 'alert')}, "
                f"{sum(r.would_send for r in runs)} would be sent, "
                f"{sum(r.duplicates for r in runs)} already notified. Nothing was sent."
            )
        else:
            text = (
                f"Done: {plural(len(runs), 'rule')}, {plural(alerts, 'alert')}, "
                f"{sum(r.sent for r in runs)} sent, "
                f"{sum(r.duplicates for r in runs)} already notified, "
                f"{sum(r.failed for r in runs)} failed."
            )
        self.stdout.write(text)
        if failed_rules:
            names = ", ".join(run.rule.name for run in failed_rules)
            raise CommandError(f"{len(failed_rules)} rule(s) failed: {names}.")
