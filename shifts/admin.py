"""Admin of shifts: when each role works in each warehouse, and who is on now."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from config import timestamps

from . import schedule, selectors
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
    list_display = [
        "shift_name",
        "warehouse",
        "role",
        "starts",
        "ends",
        "open_count",
        "claimed_count",
        "released_count",
        "accepted_by",
        "accepted_at",
    ]
    list_filter = ["warehouse", "role", ("accepted_at", admin.EmptyFieldListFilter)]
    search_fields = ["shift_name", "role__name", "warehouse__code", "accepted_by__username"]
    list_select_related = ["warehouse", "role", "accepted_by"]
    date_hierarchy = "ends"
    readonly_fields = [
        "warehouse",
        "role",
        "shift",
        "shift_name",
        "starts",
        "ends",
        "created_at",
        "content",
        "notification_id",
        "accepted_by",
        "accepted_at",
        "completed_at",
    ]
    exclude = ["lease_until"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made by beat at each shift end

    def _count(self, handover: Handover, name: str) -> int | str:
        return (handover.content.get("counts") or {}).get(name, "-")

    @admin.display(description=_("open"))
    def open_count(self, handover: Handover) -> int | str:
        return self._count(handover, "open")

    @admin.display(description=_("claimed by the outgoing shift"))
    def claimed_count(self, handover: Handover) -> int | str:
        return self._count(handover, "claimed_off_shift")

    @admin.display(description=_("released"))
    def released_count(self, handover: Handover) -> int | str:
        return handover.content.get("released", "-")
