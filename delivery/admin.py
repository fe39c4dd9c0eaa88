"""The delivery page of the admin (SPEC 16): each active warehouse against the objective, above
the episodes of late or missing delivery and their alarms."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from redis.exceptions import RedisError

from . import selectors
from .models import Episode
from .objective import Objective


@admin.register(Episode)
class EpisodeAdmin(admin.ModelAdmin):
    list_display = ["warehouse", "status", "started_at", "alarmed_at", "ended_at"]
    list_filter = ["status", "warehouse"]
    readonly_fields = ["warehouse", "status", "started_at", "alarmed_at", "ended_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # episodes are what the checks found

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> TemplateResponse:
        context = dict(extra_context or {})
        context["objective"] = Objective.configured()
        try:
            context["readings"] = selectors.readings()
        except RedisError:
            context["readings_error"] = True
        response: TemplateResponse = super().changelist_view(request, context)  # type: ignore[assignment]
        return response
