"""Admin of shifts: when each role works in each warehouse, who is on now, and the handovers
at their ends (read-only records)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from config import timestamps

from . import schedule, selectors, wording
from .models import WEEKDAY_NAMES, Handover, Shift

WEEKDAY_CHOICES = [(number, name) for number, name in WEEKDAY_NAMES.items()]


class ShiftForm(forms.ModelForm):
    weekdays = forms.TypedMultipleChoiceField(
        choices=WEEKDAY_CHOICES,
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Weekdays"),
        help_text=_(
            "The days the shift starts on (a night shift belongs to the day it starts). "
            "None ticked: every day."
        ),
    )

    class Meta:
        model = Shift
        fields = ["warehouse", "role", "name", "starts", "ends", "weekdays", "release_claims"]

    def clean_weekdays(self) -> list[int]:
        return sorted(self.cleaned_data.get("weekdays") or [])


@admin.register(Shift)
class ShiftAdmin(admin.ModelAdmin):
    form = ShiftForm
    list_display = [
        "name",
        "warehouse",
        "role",
        "starts",
        "ends",
        "days",
        "release_claims",
        "on_now",
        "members_on_now",
    ]
    list_filter = ["warehouse", "role", "release_claims"]
    search_fields = ["name", "warehouse__code", "role__name"]
    autocomplete_fields = ["role"]
    list_select_related = ["warehouse", "role"]

    @admin.display(description=_("days"))
    def days(self, shift: Shift) -> str:
        return shift.weekdays_label

    @admin.display(description=_("on now"), boolean=True)
    def on_now(self, shift: Shift) -> bool:
        return schedule.is_running(shift.times(), timestamps.now())

    @admin.display(description=_("on shift now"))
    def members_on_now(self, shift: Shift) -> str:
        if not self.on_now(shift):
            return "-"
        names = [name for _, name in selectors.role_members(role_id=shift.role_id)]
        return ", ".join(names) or str(_("(no members)"))


@admin.register(Handover)
class HandoverAdmin(admin.ModelAdmin):
    """A record of what happened at a shift end: shown, told in sentences, never edited. It
    is not deleted on its own either (deleting its warehouse or role still takes it along)."""

    list_display = [
        "shift_name",
        "warehouse",
        "role",
        "starts",
        "ends",
        "open_count",
        "claimed_count",
        "snoozed_count",
        "released_count",
        "accepted_by",
        "accepted_at",
    ]
    list_filter = ["warehouse", "role", ("accepted_at", admin.EmptyFieldListFilter)]
    search_fields = ["shift_name", "role__name", "warehouse__code", "accepted_by__username"]
    list_select_related = ["warehouse", "role", "accepted_by"]
    date_hierarchy = "ends"
    fieldsets = [
        (None, {"fields": ["warehouse", "role", "shift", "shift_name", "local_times"]}),
        (_("What the shift handed over"), {"fields": ["summary"]}),
        (_("Acceptance"), {"fields": ["accepted_by", "accepted_at"]}),
        (
            _("Record"),
            {
                "fields": ["starts", "ends", "created_at", "completed_at", "notification_id"],
                "classes": ["collapse"],
            },
        ),
    ]
    readonly_fields = [
        "warehouse",
        "role",
        "shift",
        "shift_name",
        "local_times",
        "summary",
        "accepted_by",
        "accepted_at",
        "starts",
        "ends",
        "created_at",
        "completed_at",
        "notification_id",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made by beat at each shift end

    def has_change_permission(self, request: HttpRequest, obj: Handover | None = None) -> bool:
        return False  # a record of what happened: the admin shows it without a Save button

    # Deleting stays permitted in general, so that the admin can delete a warehouse or a role
    # with its handovers (Django asks this admin about each of them); a handover's own delete
    # page and the bulk action are closed instead.
    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        raise PermissionDenied

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        return super().change_view(
            request, object_id, form_url, {**(extra_context or {}), "show_delete": False}
        )

    def _count(self, handover: Handover, name: str) -> int | str:
        return (handover.content.get("counts") or {}).get(name, "-")

    @admin.display(description=_("open"))
    def open_count(self, handover: Handover) -> int | str:
        return self._count(handover, "open")

    @admin.display(description=_("claimed by the outgoing shift"))
    def claimed_count(self, handover: Handover) -> int | str:
        return self._count(handover, "claimed_off_shift")

    @admin.display(description=_("snoozed"))
    def snoozed_count(self, handover: Handover) -> int | str:
        return self._count(handover, "snoozed")

    @admin.display(description=_("released"))
    def released_count(self, handover: Handover) -> int | str:
        return handover.content.get("released", "-")

    @admin.display(description=_("local times"))
    def local_times(self, handover: Handover) -> str:
        zone = schedule.zone(handover.warehouse.timezone)
        starts, ends = handover.starts.astimezone(zone), handover.ends.astimezone(zone)
        return f"{starts:%Y-%m-%d %H:%M} - {ends:%Y-%m-%d %H:%M} ({handover.warehouse.timezone})"

    @admin.display(description=_("summary"))
    def summary(self, handover: Handover) -> str:
        return handover_summary_html(handover.content, timezone=handover.warehouse.timezone)


def handover_summary_html(content: dict[str, Any], *, timezone: str) -> SafeString:
    """The content as the page tells it: a sentence per section with its alerts (and who held
    or snoozed them, times in `timezone`), then the claims given back and the median time to
    claim. Every value from the content is escaped."""
    counts = content.get("counts") or {}
    parts = []
    for name in wording.SECTIONS:
        if name not in counts:
            continue
        items = content.get(name) or []
        listed = format_html_join(
            "", "<li>{}</li>", ((_alert_line(name, item, timezone),) for item in items)
        )
        more = int(counts[name]) - len(items)
        parts.append(
            format_html(
                "<p>{}</p>{}{}",
                wording.sentence(name, int(counts[name])),
                format_html("<ul>{}</ul>", listed) if items else "",
                format_html("<p>{}</p>", _more(more)) if more > 0 else "",
            )
        )
    if content.get("released"):
        parts.append(format_html("<p>{}</p>", wording.released(int(content["released"]))))
    median = content.get("median_time_to_claim_seconds")
    if median is not None:
        parts.append(format_html("<p>{}</p>", wording.median_time_to_claim(float(median))))
    return format_html(
        '<div class="handover-summary">{}</div>', format_html_join("", "{}", ((p,) for p in parts))
    )


def _alert_line(section: str, item: dict[str, Any], timezone: str) -> SafeString:
    who = ""
    if section == "claimed_off_shift" and item.get("claimed_by"):
        who = gettext("claimed by %(name)s") % {"name": item["claimed_by"].get("username", "")}
    elif section == "snoozed" and item.get("snoozed_by"):
        who = gettext("snoozed by %(name)s until %(time)s") % {
            "name": item["snoozed_by"].get("username", ""),
            "time": _local(item.get("until"), timezone),
        }
    if not who:
        return format_html("{}", item.get("title", ""))
    return format_html('{} <span class="quiet">{}</span>', item.get("title", ""), who)


def _local(iso: Any, timezone: str) -> str:
    """An ISO 8601 time of the content as a local time of the warehouse."""
    try:
        at = dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return str(iso)
    return f"{at.astimezone(schedule.zone(timezone)):%Y-%m-%d %H:%M}"


def _more(count: int) -> str:
    return ngettext("and %(count)s more", "and %(count)s more", count) % {"count": count}
