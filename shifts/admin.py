"""Admin of shifts: when each role works in each warehouse, and who is on now."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from config import timestamps

from . import schedule, selectors
from .models import WEEKDAY_NAMES, Shift

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
