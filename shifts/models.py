"""Shifts of a role in a warehouse (and, later in this module, the handovers at their ends)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config.bulk_writes import AnnouncingManager
from subscriptions.models import Warehouse

from .schedule import ShiftTimes

WEEKDAY_NAMES = {
    1: _("Mon"),
    2: _("Tue"),
    3: _("Wed"),
    4: _("Thu"),
    5: _("Fri"),
    6: _("Sat"),
    7: _("Sun"),
}


def validate_weekdays(value: Any) -> None:
    """A list of distinct ISO weekday numbers (1 = Monday ... 7 = Sunday); empty = every day."""
    if not isinstance(value, list) or any(
        isinstance(day, bool) or not isinstance(day, int) or not 1 <= day <= 7 for day in value
    ):
        raise ValidationError(
            _("Weekdays are a list of numbers from 1 (Monday) to 7 (Sunday), e.g. [1, 2, 3]."),
            code="weekdays",
        )
    if len(set(value)) != len(value):
        raise ValidationError(_("Each weekday may be listed once."), code="weekdays_repeated")


class Shift(models.Model):
    """A role works in a warehouse from `starts` to `ends` (local times in the warehouse's
    zone) on the weekdays it starts on. Shifts of one role may overlap."""

    warehouse = models.ForeignKey(
        Warehouse, verbose_name=_("warehouse"), on_delete=models.CASCADE, related_name="shifts"
    )
    role = models.ForeignKey(
        Group,
        verbose_name=_("role"),
        on_delete=models.CASCADE,
        related_name="shifts",
        help_text=_("The role (group) working this shift; its members are on shift while it runs."),
    )
    name = models.CharField(_("name"), max_length=100, help_text=_("e.g. Early, Late, Night"))
    starts = models.TimeField(_("starts"), help_text=_("Local time in the warehouse's time zone."))
    ends = models.TimeField(
        _("ends"),
        help_text=_(
            "Local time. Not after the start means the shift crosses midnight and ends the "
            "next day (22:00 to 06:00); the same time as the start is a 24-hour shift."
        ),
    )
    weekdays = models.JSONField(
        _("weekdays"),
        default=list,
        blank=True,
        validators=[validate_weekdays],
        help_text=_(
            "ISO numbers of the days the shift starts on, 1 = Monday ... 7 = Sunday, e.g. "
            "[1, 2, 3, 4, 5]; empty = every day. A night shift is listed by the day it starts."
        ),
    )
    release_claims = models.BooleanField(
        _("release claims"),
        default=True,
        help_text=_(
            "At the end of the shift, alerts claimed by members going off shift go back to open."
        ),
    )

    objects = AnnouncingManager()  # bulk writes are announced (config/bulk_writes.py)

    class Meta:
        verbose_name = _("shift")
        verbose_name_plural = _("shifts")
        ordering = ["warehouse__code", "role__name", "starts", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.starts:%H:%M}-{self.ends:%H:%M})"

    def clean(self) -> None:
        super().clean()
        if isinstance(self.weekdays, list) and all(isinstance(d, int) for d in self.weekdays):
            self.weekdays = sorted(self.weekdays)
        for value in (self.starts, self.ends):
            if value is not None and (value.second, value.microsecond) != (0, 0):
                raise ValidationError(_("Shift times are whole minutes (HH:MM)."), code="minutes")

    @property
    def weekdays_label(self) -> str:
        if not self.weekdays:
            return str(_("every day"))
        return ", ".join(str(WEEKDAY_NAMES.get(day, day)) for day in sorted(self.weekdays))

    def times(self, timezone: str | None = None) -> ShiftTimes:
        """Its schedule, in `timezone` (default: its warehouse's)."""
        return ShiftTimes(
            starts=self.starts,
            ends=self.ends,
            weekdays=tuple(sorted(self.weekdays or ())),
            timezone=timezone or self.warehouse.timezone,
        )


class Handover(models.Model):
    """What one run of a shift hands to the next (SPEC 13): made once at its end by beat."""

    warehouse = models.ForeignKey(
        Warehouse, verbose_name=_("warehouse"), on_delete=models.CASCADE, related_name="handovers"
    )
    role = models.ForeignKey(
        Group, verbose_name=_("role"), on_delete=models.CASCADE, related_name="handovers"
    )
    # A deleted shift keeps its handovers (under the name it had).
    shift = models.ForeignKey(
        Shift,
        verbose_name=_("shift"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="handovers",
    )
    shift_name = models.CharField(_("shift name"), max_length=100)
    starts = models.DateTimeField(_("starts"), help_text=_("When this run of the shift started."))
    ends = models.DateTimeField(_("ends"), help_text=_("When this run of the shift ended."))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    content = models.JSONField(_("content"), default=dict, blank=True)
    notification_id = models.CharField(_("notification ID"), max_length=36, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("accepted by"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="accepted_handovers",
    )
    accepted_at = models.DateTimeField(_("accepted at"), null=True, blank=True)
    # Bookkeeping of the beat task: done once the notification went out; a worker holds the
    # lease while it builds (a crashed one's lease lapses and a later tick finishes the work).
    completed_at = models.DateTimeField(_("completed at"), null=True, blank=True)
    lease_until = models.DateTimeField(_("lease until"), null=True, blank=True)

    class Meta:
        verbose_name = _("handover")
        verbose_name_plural = _("handovers")
        ordering = ["-ends", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["shift", "ends"], name="handover_once_per_shift_end")
        ]
        indexes = [models.Index(fields=["warehouse", "role", "-ends"])]

    def __str__(self) -> str:
        return gettext("%(shift)s until %(time)s UTC") % {
            "shift": self.shift_name,
            "time": f"{self.ends:%Y-%m-%d %H:%M}",
        }
