"""The SqlRule model: a rule written as one read-only SELECT in the admin, for non-programmers;
and SqlRuleDryRun, the recorded dry runs of its query."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from subscriptions.models import MessageType

from .domain import DryRunStatus
from .sql import SqlRuleError, validate

QUERY_HELP = _(
    "One read-only SELECT returning the columns warehouse_id, title and body, and optionally "
    "key (the condition: the same key is not notified again while it persists; default: the "
    "title) and data (a JSON object as text). Every row is one notification. Example: "
    "SELECT warehouse_id, 'Replenish ' || code AS title, 'Stock is ' || stock AS body, "
    "code AS key FROM inventory_bin WHERE stock < 0"
)


class SqlRule(models.Model):
    """A rule written in SQL. The runner (rules.runner) runs it when it is due."""

    name = models.CharField(_("name"), max_length=100, unique=True)
    description = models.TextField(
        _("description"), blank=True, help_text=_("What the rule is for, for colleagues.")
    )
    # PROTECT: deleting a message type must not silently delete the rules that raise it.
    message_type = models.ForeignKey(
        MessageType,
        verbose_name=_("message type"),
        on_delete=models.PROTECT,
        related_name="sql_rules",
    )
    query = models.TextField(_("query"), help_text=QUERY_HELP)
    interval_seconds = models.PositiveIntegerField(
        _("interval (seconds)"),
        default=60,
        validators=[MinValueValidator(5)],
        help_text=_("Run at most this often."),
    )
    is_active = models.BooleanField(
        _("active"),
        default=False,
        help_text=_(
            "A new rule, or one whose query changed, can be activated only once a dry run of "
            "its query has passed (save it, then use the Dry run button)."
        ),
    )
    # The query text of the last dry run that passed: the rule runs only while it is the query.
    dry_run_passed_query = models.TextField(_("dry run passed query"), blank=True, editable=False)
    last_run_at = models.DateTimeField(_("last run at"), null=True, blank=True, editable=False)
    last_result_count = models.PositiveIntegerField(
        _("last result count"),
        null=True,
        blank=True,
        editable=False,
        help_text=_("Rows the last run's query returned."),
    )
    last_error = models.TextField(_("last error"), blank=True, editable=False)

    class Meta:
        # The table keeps the name it had when rules lived in notifications/.
        db_table = "notifications_sqlrule"
        ordering = ["name"]
        verbose_name = _("SQL rule")
        verbose_name_plural = _("SQL rules")

    def __str__(self) -> str:
        return self.name

    @property
    def rule_id(self) -> str:
        """The id under which the runner keeps its Redis state (stable when renamed)."""
        return f"sql:{self.pk}"

    @property
    def dry_run_passed(self) -> bool:
        """Whether a dry run of the current query has passed (a rule may run only then)."""
        return bool(self.query) and self.dry_run_passed_query == self.query

    def clean(self) -> None:
        """Refuse a query that is not one read-only SELECT, does not run, or lacks columns,
        and an active rule whose query has not passed a dry run."""
        super().clean()
        if not self.query:
            return

        try:
            validate(self.query)
        except SqlRuleError as exc:
            raise ValidationError({"query": str(exc)}) from exc
        if self.is_active and not self.dry_run_passed:
            raise ValidationError(
                {
                    "is_active": _(
                        "A rule can be active only once a dry run of its query has passed: "
                        "save it inactive, run the dry run, then activate it."
                    )
                }
            )


def query_digest(query: str) -> str:
    """The SHA-256 of a query's text: unique indexes cannot hold long text on PostgreSQL."""
    return hashlib.sha256(query.encode()).hexdigest()


class SqlRuleDryRun(models.Model):
    """One dry run of an SQL rule's query, recorded when it is asked for (the admin's Dry run,
    or `run_rules --rule NAME --dry-run`) and finished by whoever runs it: a Celery worker for
    the admin, the command itself for the command (rules.dry_runs).

    A passed dry run records its query on the rule (dry_run_passed_query): that is what
    activation checks. Of one rule and query text, at most one dry run is unfinished at a time.
    """

    rule = models.ForeignKey(SqlRule, on_delete=models.CASCADE, related_name="dry_runs")
    # The query as it was when the dry run was asked for: the one that runs, even if the rule
    # is edited meanwhile (a pass then counts for this text only).
    query = models.TextField()
    query_sha256 = models.CharField(max_length=64)
    status = models.CharField(
        max_length=10,
        choices=[(status.value, status.value) for status in DryRunStatus],
        default=DryRunStatus.PENDING.value,
    )
    # None: asked for by `manage.py run_rules` (or by a user since deleted).
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    timeout_seconds = models.FloatField(help_text="The query's time limit.")
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    elapsed_ms = models.FloatField(null=True, blank=True)
    alert_count = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    warning = models.TextField(blank=True)
    # What the run would do with each alert: [{"warehouse_id", "key", "title", "body", "data",
    # "status"}], at most RULES_SQL_MAX_ROWS of them.
    outcomes = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "notifications_sqlruledryrun"
        ordering = ["-created_at", "-pk"]
        verbose_name = "SQL rule dry run"
        constraints = [
            # Two presses of the same query share one run (see dry_runs.dry_run_open).
            models.UniqueConstraint(
                fields=["rule", "query_sha256"],
                condition=models.Q(status__in=["pending", "running"]),
                name="one_unfinished_dry_run_per_query",
            )
        ]

    def __str__(self) -> str:
        return f"Dry run {self.pk} of {self.rule_id} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status not in DryRunStatus.unfinished()
