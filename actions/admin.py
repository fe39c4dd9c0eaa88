"""Alert actions in the admin: on their own pages, and inline on each message type; and the
runs (read only: the outbox's page retries a failed one). Saving an action that asks for a
scan warns when recent alerts of its type do not carry the key it scans (the page shows the
action disabled on those)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from config.redis import REDIS_UNAVAILABLE
from subscriptions.models import MessageType

from .models import ActionRun, AlertAction, generate_secret
from .selectors import field_coverage

logger = logging.getLogger(__name__)


def warn_of_missing_fields(request: HttpRequest, actions: Iterable[AlertAction]) -> None:
    """A warning for each active action whose confirm_field recent alerts of its type lack."""
    for action in actions:
        if not action.is_active or not action.confirm_field:
            continue
        type_code = action.message_type.code
        try:
            coverage = field_coverage(type_code=type_code, field=action.confirm_field)
        except REDIS_UNAVAILABLE as exc:
            logger.warning("Cannot check the recent alerts of %s: %s", type_code, exc)
            messages.warning(
                request,
                gettext(
                    "Could not check whether recent %(type)s alerts carry “%(field)s” "
                    "(Redis is unavailable)."
                )
                % {"type": type_code, "field": action.confirm_field},
            )
            continue
        if coverage.lacking == 0:
            continue
        values = {
            "lacking": coverage.lacking,
            "count": coverage.looked_at,
            "type": type_code,
            "field": action.confirm_field,
            "action": action.label,
        }
        if coverage.looked_at == 1:
            text = gettext(
                "The most recent %(type)s alert does not carry “%(field)s” in its data: on it, "
                "“%(action)s” is shown disabled, as there is nothing to scan. Publish the "
                "alerts of this type with “%(field)s” in their data."
            )
        else:
            text = ngettext(
                "%(lacking)s of the %(count)s most recent %(type)s alerts does not carry "
                "“%(field)s” in its data: on it, “%(action)s” is shown disabled, as there is "
                "nothing to scan. Publish the alerts of this type with “%(field)s” in their "
                "data.",
                "%(lacking)s of the %(count)s most recent %(type)s alerts do not carry "
                "“%(field)s” in their data: on those, “%(action)s” is shown disabled, as there "
                "is nothing to scan. Publish the alerts of this type with “%(field)s” in their "
                "data.",
                coverage.lacking,
            )
        messages.warning(request, text % values)


# What describes an action, in the list of actions and in its message type's inline alike.
ACTION_COLUMNS = ["code", "label", "label_zh", "url", "resolves", "confirm_field"]


@admin.register(AlertAction)
class AlertActionAdmin(admin.ModelAdmin):
    list_display = ["message_type", *ACTION_COLUMNS, "is_active"]
    list_filter = ["is_active", "resolves", "message_type"]
    search_fields = ["code", "label", "label_zh", "url", "message_type__code"]
    list_select_related = ["message_type"]
    readonly_fields = ["secret"]
    actions = ["new_secret"]

    def save_model(
        self, request: HttpRequest, obj: AlertAction, form: ModelForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        if not change or {"confirm_field", "is_active", "message_type"} & set(form.changed_data):
            warn_of_missing_fields(request, [obj])

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
    fields = [*ACTION_COLUMNS, "confirm_label", "confirm_label_zh", "is_active"]
    show_change_link = True


_base = type(admin.site._registry[MessageType])
admin.site.unregister(MessageType)


@admin.register(MessageType)
class MessageTypeWithActionsAdmin(_base):  # type: ignore[valid-type,misc]
    inlines = [*_base.inlines, AlertActionInline]

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: BaseInlineFormSet, change: bool
    ) -> Any:
        saved = super().save_formset(request, form, formset, change)
        if formset.model is AlertAction:
            changed = [
                *formset.new_objects,
                *(
                    action
                    for action, fields in formset.changed_objects
                    if {"confirm_field", "is_active"} & set(fields)
                ),
            ]
            warn_of_missing_fields(request, changed)
        return saved


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
