"""The outbox in the admin: what waits, what failed and why, and a button to try again."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from . import services
from .models import OutboxMessage


@admin.register(OutboxMessage)
class OutboxMessageAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "kind",
        "status",
        "attempts",
        "max_attempts",
        "next_attempt_at",
        "last_error",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "kind")
    search_fields = ("id", "last_error")
    date_hierarchy = "created_at"
    actions = ["retry_now"]
    readonly_fields = [f.name for f in OutboxMessage._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # features write messages; an operator only retries them

    @admin.action(description=_("Retry now (failed: another round of attempts)"))
    def retry_now(self, request: HttpRequest, queryset: QuerySet[OutboxMessage]) -> None:
        if not self.has_change_permission(request):
            self.message_user(
                request, gettext("You may not change outbox messages."), messages.ERROR
            )
            return
        done = sum(services.retry_now(message) for message in queryset)
        skipped = queryset.count() - done
        self.message_user(
            request,
            gettext("%(done)d queued again; %(skipped)d left as they are.")
            % {"done": done, "skipped": skipped},
        )
