"""Admin of SQL rules: write the query, see the last run, dry-run (preview) or run them now.

A dry run is recorded and run by a Celery worker (rules.dry_runs): the press answers at once
with a page that refreshes until the worker has recorded the result.
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import F, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from config import timestamps
from config.users import signed_in
from subscriptions.models import Warehouse

from . import dry_runs
from .domain import DryRunStatus
from .models import SqlRule, SqlRuleDryRun

DRY_RUN_TEMPLATE = "admin/rules/sqlrule/dry_run.html"
# How often the dry run page reloads itself while a dry run is not finished.
DRY_RUN_REFRESH_SECONDS = 2
# A dry run's status in words (the stored values are English words).
DRY_RUN_STATUS = {
    DryRunStatus.PENDING.value: _("pending"),
    DryRunStatus.RUNNING.value: _("running"),
    DryRunStatus.PASSED.value: _("passed"),
    DryRunStatus.FAILED.value: _("failed"),
}


class LastRunFilter(admin.SimpleListFilter):
    title = _("last run")
    parameter_name = "last_run"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("failed", _("Failed")), ("ok", _("Succeeded")), ("never", _("Never ran"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "failed":
            return queryset.exclude(last_error="")
        if self.value() == "ok":
            return queryset.filter(last_run_at__isnull=False, last_error="")
        if self.value() == "never":
            return queryset.filter(last_run_at__isnull=True)
        return queryset


@admin.register(SqlRule)
class SqlRuleAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "message_type_code",
        "every",
        "is_active",
        "last_run_at",
        "result_count",
        "last_run_ok",
        "short_error",
    ]
    list_filter = ["is_active", LastRunFilter, "message_type"]
    search_fields = ["name", "description", "query", "message_type__code"]
    list_select_related = ["message_type"]
    autocomplete_fields = ["message_type"]
    readonly_fields = ["last_run_at", "last_result_count", "last_error", "last_dry_run"]
    fieldsets = [
        (
            None,
            {"fields": ["name", "description", "message_type", "interval_seconds", "is_active"]},
        ),
        (_("Query"), {"fields": ["query"]}),
        (
            _("Last run"),
            {"fields": ["last_run_at", "last_result_count", "last_error", "last_dry_run"]},
        ),
    ]
    formfield_overrides = {
        models.TextField: {"widget": forms.Textarea(attrs={"rows": 4, "cols": 100})},
    }
    actions = ["dry_run", "run_now", "activate", "deactivate"]
    change_form_template = "admin/rules/sqlrule/change_form.html"

    def formfield_for_dbfield(
        self, db_field: models.Field, request: HttpRequest, **kwargs: object
    ) -> forms.Field | None:
        if db_field.name == "query":
            kwargs["widget"] = forms.Textarea(
                attrs={
                    "rows": 14,
                    "cols": 100,
                    "spellcheck": "false",
                    "style": "font-family: monospace; width: 100%;",
                }
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description=_("Type"), ordering="message_type__code")
    def message_type_code(self, rule: SqlRule) -> str:
        return rule.message_type.code

    @admin.display(description=_("Every"), ordering="interval_seconds")
    def every(self, rule: SqlRule) -> str:
        return f"{rule.interval_seconds} s"

    @admin.display(description=_("Result count"), ordering="last_result_count")
    def result_count(self, rule: SqlRule) -> int | None:
        return rule.last_result_count

    @admin.display(description=_("OK"), boolean=True)
    def last_run_ok(self, rule: SqlRule) -> bool | None:
        return None if rule.last_run_at is None else not rule.last_error

    @admin.display(description=_("Last error"))
    def short_error(self, rule: SqlRule) -> str:
        error = rule.last_error
        return error if len(error) <= 80 else error[:79] + "…"

    @admin.display(description=_("Last dry run"))
    def last_dry_run(self, rule: SqlRule) -> str:
        latest = None if rule.pk is None else rule.dry_runs.first()
        if latest is None:
            return gettext("None yet")
        latest = dry_runs.dry_run_current(latest)
        return format_html(
            '<a href="{}">{} ({})</a>',
            self._results_url([latest.pk]),
            DRY_RUN_STATUS.get(latest.status, latest.status),
            timestamps.iso(latest.created_at),
        )

    # A dry run executes the query like a real run: the same permission as editing the rule.
    @admin.action(
        description=_("Dry run: preview the alerts, send nothing"), permissions=["change"]
    )
    def dry_run(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse:
        by = signed_in(request)
        requested = [dry_runs.dry_run_request(rule=rule, by=by) for rule in queryset]
        return HttpResponseRedirect(self._results_url([d.pk for d in requested]))

    @admin.action(description=_("Run now (send the alerts)"), permissions=["change"])
    def run_now(self, request: HttpRequest, queryset: QuerySet) -> None:
        # Queued for a worker on the rules queue, as dry runs are: no web process waits on a
        # rule's SQL. Each run is recorded on its rule (the list's last run columns).
        from .tasks import run_sql_rules_now

        ids = sorted(queryset.values_list("pk", flat=True))
        try:
            run_sql_rules_now.apply_async(args=(ids,))
        except Exception as exc:  # the broker's errors vary: kombu, redis, OS
            self.message_user(
                request,
                gettext(
                    "Could not queue the run for a worker (is the broker reachable?): %(error)s"
                )
                % {"error": exc},
                messages.ERROR,
            )
            return
        self.message_user(
            request,
            ngettext(
                "Queued %(count)d rule to run in a worker (the rules queue); its run shows in "
                "its last run columns when it is done.",
                "Queued %(count)d rules to run in a worker (the rules queue); each run shows in "
                "its last run columns when it is done.",
                len(ids),
            )
            % {"count": len(ids)},
        )

    @admin.action(description=_("Activate selected"), permissions=["change"])
    def activate(self, request: HttpRequest, queryset: QuerySet) -> None:
        passed = queryset.exclude(query="").filter(query=F("dry_run_passed_query"))
        waiting = sorted(
            queryset.exclude(pk__in=passed.values("pk")).values_list("name", flat=True)
        )
        count = passed.update(is_active=True)
        self.message_user(request, gettext("Activated %(count)d.") % {"count": count})
        if waiting:
            self.message_user(
                request,
                gettext("Not activated, no dry run of their query has passed yet: %(names)s")
                % {"names": ", ".join(waiting)},
                messages.WARNING,
            )

    @admin.action(description=_("Deactivate selected"), permissions=["change"])
    def deactivate(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.update(is_active=False)
        self.message_user(request, gettext("Deactivated %(count)d.") % {"count": count})

    def get_urls(self) -> list:
        one_rule = path(
            "<int:pk>/dry-run/",
            self.admin_site.admin_view(self.dry_run_view),
            name="rules_sqlrule_dry_run",
        )
        results = path(
            "dry-runs/",
            self.admin_site.admin_view(self.dry_run_results_view),
            name="rules_sqlrule_dry_runs",
        )
        return [one_rule, results, *super().get_urls()]

    def dry_run_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """POST (the rule page's Dry run button): ask a worker for a dry run of the rule, and
        show its page. GET: the rule's latest dry run."""
        rule = get_object_or_404(SqlRule.objects.select_related("message_type"), pk=pk)
        if not self.has_change_permission(request, rule):
            raise PermissionDenied
        if request.method == "POST":
            requested = dry_runs.dry_run_request(rule=rule, by=signed_in(request))
            return HttpResponseRedirect(self._results_url([requested.pk]))
        latest = rule.dry_runs.first()
        return self._dry_run_page(
            request, [] if latest is None else [dry_runs.dry_run_current(latest)], rule=rule
        )

    def dry_run_results_view(self, request: HttpRequest) -> HttpResponse:
        """The page of the dry runs `?run=<id>&run=<id>`: it refreshes until they are done."""
        try:
            ids = [int(value) for value in request.GET.getlist("run")]
        except ValueError:
            ids = []
        found = dry_runs.dry_runs_current(ids)
        if not all(self.has_change_permission(request, d.rule) for d in found):
            raise PermissionDenied
        return self._dry_run_page(request, found)

    def _results_url(self, ids: list[int]) -> str:
        query = urlencode([("run", pk) for pk in ids])
        return f"{reverse('admin:rules_sqlrule_dry_runs')}?{query}"

    def _dry_run_page(
        self, request: HttpRequest, found: list[SqlRuleDryRun], *, rule: SqlRule | None = None
    ) -> HttpResponse:
        runs = [(d, dry_runs.dry_run_result(d)) for d in found]
        warehouse_ids = {o.alert.warehouse_id for _, run in runs for o in run.outcomes}
        codes = dict(Warehouse.objects.filter(pk__in=warehouse_ids).values_list("pk", "code"))
        previews = [
            {
                "dry_run": dry_run,
                "run": run,
                "status": _status_line(dry_run),
                "change_url": reverse("admin:rules_sqlrule_change", args=[dry_run.rule_id]),
                "again_url": reverse("admin:rules_sqlrule_dry_run", args=[dry_run.rule_id]),
                "rows": [
                    {
                        "warehouse": codes.get(
                            o.alert.warehouse_id,
                            gettext("#%(id)s (unknown)") % {"id": o.alert.warehouse_id},
                        ),
                        "key": o.alert.key,
                        "title": o.alert.title,
                        "body": o.alert.body,
                        "data": json.dumps(o.alert.data, ensure_ascii=False),
                        "status": o.status,
                    }
                    for o in run.outcomes
                ],
            }
            for dry_run, run in runs
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Dry run of SQL rules"),
            "opts": self.model._meta,
            "previews": previews,
            "waiting": any(not d.finished for d in found),
            "refresh_seconds": DRY_RUN_REFRESH_SECONDS,
            "rule": rule,
        }
        if rule is not None:
            context["again_url"] = reverse("admin:rules_sqlrule_dry_run", args=[rule.pk])
        return TemplateResponse(request, DRY_RUN_TEMPLATE, context)


def _status_line(dry_run: SqlRuleDryRun) -> str:
    """Where a dry run stands, in one sentence for the page."""
    who = dry_run.requested_by.get_username() if dry_run.requested_by else "run_rules"
    asked = gettext("asked for by %(who)s at %(time)s") % {
        "who": who,
        "time": timestamps.iso(dry_run.created_at),
    }
    if dry_run.status == DryRunStatus.PENDING:
        return gettext("Waiting for a worker (%(asked)s)…") % {"asked": asked}
    if dry_run.status == DryRunStatus.RUNNING:  # in a worker, or in run_rules
        started = timestamps.iso(dry_run.started_at or dry_run.created_at)
        return gettext("Running since %(started)s (time limit %(limit)s s; %(asked)s)…") % {
            "started": started,
            "limit": f"{dry_run.timeout_seconds:g}",
            "asked": asked,
        }
    if dry_run.status == DryRunStatus.FAILED:
        return gettext("Failed (%(asked)s): the rule cannot be activated with this query.") % {
            "asked": asked
        }
    if dry_run.query != dry_run.rule.query:
        return gettext(
            "Passed (%(asked)s), but the rule's query has changed since: dry-run it again."
        ) % {"asked": asked}
    return gettext("Passed (%(asked)s): the rule can be activated.") % {"asked": asked}
