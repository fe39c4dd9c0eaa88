"""`manage.py run_rules [--rule NAME] [--dry-run]`: run the due rules, or one rule, by hand."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from notifications.rules import runner, sources
from notifications.rules.domain import AlertStatus, RuleRun, plural
from subscriptions.models import Warehouse


class Command(BaseCommand):
    help = (
        "Run every active rule that is due (a rule that never ran is due), or with --rule "
        "one rule now, active or not. --dry-run prints each alert and sends nothing."
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
            help="Print the alerts that would be sent; send and record nothing.",
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
        runs = runner.run_rules(rules, dry_run=dry_run)
        ids = {o.alert.warehouse_id for run in runs for o in run.outcomes}
        self.warehouse_codes = dict(Warehouse.objects.filter(pk__in=ids).values_list("pk", "code"))
        for run in runs:
            self._report(run, verbose=dry_run or options["verbosity"] > 1)
        self._total(runs, dry_run=dry_run)

    def _report(self, run: RuleRun, *, verbose: bool) -> None:
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
