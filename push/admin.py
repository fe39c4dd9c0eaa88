"""Admin of push subscriptions: who receives critical alerts on which browsers, and how it went."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .models import PushSubscription


@admin.register(PushSubscription)
class PushSubscriptionAdmin(admin.ModelAdmin):
    list_display = (
        "user",
        "push_service",
        "warehouse_codes",
        "created_at",
        "last_success_at",
        "failures",
        "total_failures",
    )
    list_filter = ("warehouses", "last_success_at", "created_at")
    search_fields = ("user__username", "endpoint")
    autocomplete_fields = ("user",)
    filter_horizontal = ("warehouses",)
    readonly_fields = (
        "endpoint",
        "p256dh",
        "auth",
        "created_at",
        "updated_at",
        "last_success_at",
        "last_failure_at",
        "failures",
        "total_failures",
        "last_error",
    )
    list_select_related = ("user",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[PushSubscription]:
        return super().get_queryset(request).prefetch_related("warehouses")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # subscriptions come from browsers (the page's "Push alerts" toggle)

    @admin.display(description=_("push service"))
    def push_service(self, subscription: PushSubscription) -> str:
        return urlsplit(subscription.endpoint).hostname or "?"

    @admin.display(description=_("warehouses"))
    def warehouse_codes(self, subscription: PushSubscription) -> str:
        return ", ".join(sorted(w.code for w in subscription.warehouses.all()))
