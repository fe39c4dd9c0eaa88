"""Admin of notices: publish and edit them (a new version when the text changes), see each
one's roster on its page, export rosters as CSV; acknowledgements are read-only records."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config import timestamps
from config.timestamps import iso

from . import selectors, services
from .api.serializers import roster_csv
from .models import Notice, NoticeAck

ROSTER_SHOWN = 200  # rows on the change page; the CSV has them all


@admin.register(Notice)
class NoticeAdmin(admin.ModelAdmin):
    list_display = [
        "title",
        "warehouse",
        "severity",
        "version",
        "requires_ack",
        "due_at",
        "is_closed",
        "created_at",
    ]
    list_filter = ["warehouse", "severity", "requires_ack", "is_closed"]
    search_fields = ["title", "body"]
    autocomplete_fields = ["roles", "users", "escalation_role"]
    list_select_related = ["warehouse"]
    readonly_fields = [
        "version",
        "version_at",
        "text_hash",
        "created_by",
        "created_at",
        "published",
        "escalated_at",
        "escalated_missing",
        "roster",
    ]
    fields = [
        "warehouse",
        "title",
        "body",
        "severity",
        "roles",
        "users",
        "requires_ack",
        "due_at",
        "escalation_role",
        "is_closed",
        *readonly_fields,
    ]
    actions = ["export_roster"]

    @admin.display(description=_("published"), boolean=True)
    def published(self, notice: Notice) -> bool:
        return notice.published_version >= notice.version

    @admin.display(description=_("roster"))
    def roster(self, notice: Notice) -> SafeString | str:
        if notice.pk is None:
            return "-"
        found = selectors.roster(notice=notice, at=timestamps.now())
        head = gettext(
            "Version %(version)d: %(acknowledged)d of %(total)d read, %(missing)d missing."
        ) % {
            "version": found.version,
            "acknowledged": found.acknowledged,
            "total": found.total,
            "missing": found.missing,
        }
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    row.username,
                    iso(row.acked_at) if row.acked_at else gettext("missing"),
                    gettext("on shift") if row.on_shift else gettext("off shift"),
                )
                for row in found.rows[:ROSTER_SHOWN]
            ),
        )
        more = (
            gettext("… and %(count)d more (export the roster as CSV).")
            % {"count": found.total - ROSTER_SHOWN}
            if found.total > ROSTER_SHOWN
            else ""
        )
        return format_html("<p>{}</p><table>{}</table><p>{}</p>", head, rows, more)

    def save_model(self, request: HttpRequest, obj: Notice, form: ModelForm, change: bool) -> None:
        # A new version when the text changed: Notice.save() keeps that rule for every caller.
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)

    def save_related(
        self, request: HttpRequest, form: ModelForm, formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        services.after_admin_save(form.instance)  # published after the commit

    @admin.action(description=_("Export the roster (CSV)"))
    def export_roster(self, request: HttpRequest, queryset: QuerySet[Notice]) -> HttpResponse:
        now = timestamps.now()
        rosters = [selectors.roster(notice=n, at=now) for n in queryset.order_by("pk")]
        response = HttpResponse(roster_csv(rosters), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="notice-rosters.csv"'
        return response


@admin.register(NoticeAck)
class NoticeAckAdmin(admin.ModelAdmin):
    """The record of who read which version (and the hash of the text they saw): read-only."""

    list_display = ["notice", "version", "user", "acked_at", "text_hash"]
    list_filter = ["notice__warehouse"]
    search_fields = ["notice__title", "user__username"]
    list_select_related = ["notice", "user"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
