"""Alert actions in the admin: on their own pages, and inline on each message type; and the
runs (read only: the outbox's page retries a failed one)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from subscriptions.models import MessageType

from .models import ActionRun, AlertAction, generate_secret


@admin.register(AlertAction)
class AlertActionAdmin(admin.ModelAdmin):
    list_display = [
        "message_type",
        "code",
        "label",
        "label_zh",
        "url",
        "resolves",
        "confirm_field",
        "is_active",
    ]
    list_filter = ["is_active", "resolves", "message_type"]
    search_fields = ["code", "label", "label_zh", "url", "message_type__code"]
    list_select_related = ["message_type"]
    readonly_fields = ["secret"]
    actions = ["new_secret"]

    @admin.action(description=_("Generate a new secret (the WMS must be given it)"))
    def new_secret(self, request: HttpRequest, queryset: QuerySet[AlertAction]) -> None:
        if not self.has_change_permission(request):
            return
        for action in queryset:
            action.secret = generate_secret()
            action.save(update_fields=["secret"])
        count = queryset.count()
        self.message_user(
            request,
            ngettext(
                "%(count)d action has a new secret.", "%(count)d actions have a new secret.", count
            )
            % {"count": count},
        )


class AlertActionInline(admin.TabularInline):
    model = AlertAction
    extra = 0
    fields = ["code", "label", "label_zh", "url", "resolves", "confirm_field", "is_active"]
    show_change_link = True


_base = type(admin.site._registry[MessageType])
admin.site.unregister(MessageType)


@admin.register(MessageType)
class MessageTypeWithActionsAdmin(_base):  # type: ignore[valid-type,misc]
    inlines = [*_base.inlines, AlertActionInline]


@admin.register(ActionRun)
class ActionRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "action",
        "warehouse",
        "notification_id",
        "username",
        "status",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "action__message_type", "warehouse"]
    search_fields = ["id", "notification_id", "username", "action__code"]
    list_select_related = ["action", "action__message_type", "warehouse"]
    readonly_fields = [f.name for f in ActionRun._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
