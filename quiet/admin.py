"""Planned silences in the admin (SPEC 17)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from notifications.domain import Severity

from . import services
from .models import Silence


class SilenceForm(forms.ModelForm):
    class Meta:
        model = Silence
        fields = (
            "warehouse",
            "message_types",
            "starts_at",
            "ends_at",
            "reason",
            "include_critical",
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        types = data.get("message_types")
        critical = not types or any(
            Severity(t.default_severity) == Severity.CRITICAL for t in types
        )
        if critical and not data.get("include_critical"):
            self.add_error(
                "include_critical",
                _(
                    "This silence covers message types that raise critical alerts: critical "
                    "alerts get through unless you tick this box."
                ),
            )
        return data


@admin.register(Silence)
class SilenceAdmin(admin.ModelAdmin):
    form = SilenceForm
    list_display = ("reason", "warehouse", "starts_at", "ends_at", "include_critical", "created_by")
    list_filter = ("warehouse", "include_critical")
    filter_horizontal = ("message_types",)

    def save_model(self, request: HttpRequest, obj: Silence, form: Any, change: bool) -> None:
        if obj.created_by_id is None:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)

    def delete_model(self, request: HttpRequest, obj: Silence) -> None:
        services.silence_delete(silence=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Silence]) -> None:
        for silence in queryset:
            services.silence_delete(silence=silence)
