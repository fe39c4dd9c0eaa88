"""Admin for warehouses, message types and subscriptions, with bulk subscribing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.contrib.auth.models import User as DjangoUser
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from . import selectors, services
from .forms import BulkSubscribeForm
from .models import MessageType, Subscription, Warehouse

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class SubscriptionCount(TypedDict):
    """What WithSubscriptionCount.get_queryset annotates each row with."""

    subscription_count: int


@admin.action(description=_("Activate selected"), permissions=["change"])
def activate(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    count = queryset.update(is_active=True)
    modeladmin.message_user(request, gettext("Activated %(count)d.") % {"count": count})


@admin.action(description=_("Deactivate selected"), permissions=["change"])
def deactivate(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    count = queryset.update(is_active=False)
    modeladmin.message_user(request, gettext("Deactivated %(count)d.") % {"count": count})


class WithSubscriptionCount(admin.ModelAdmin):
    actions = [activate, deactivate]
    # The count's GROUP BY drops the model's Meta.ordering: lists and pickers say it again.
    ordering = ["code"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(subscription_count=Count("subscriptions"))

    @admin.display(description=_("Subscriptions"), ordering="subscription_count")
    def subscriptions(
        self,
        obj: WithAnnotations[Warehouse, SubscriptionCount]
        | WithAnnotations[MessageType, SubscriptionCount],
    ) -> int:
        return obj.subscription_count


@admin.register(Warehouse)
class WarehouseAdmin(WithSubscriptionCount):
    list_display = ["code", "name", "timezone", "is_active", "subscriptions"]
    list_filter = ["is_active"]
    search_fields = ["code", "name"]


@admin.register(MessageType)
class MessageTypeAdmin(WithSubscriptionCount):
    list_display = [
        "code",
        "name",
        "name_en",
        "default_ttl_seconds",
        "default_severity",
        "escalation",
        "is_active",
        "subscriptions",
    ]
    list_filter = ["is_active", "default_severity"]
    search_fields = ["code", "name", "name_en", "description"]

    # The product's own types (the delivery canaries) keep their settings: no escalation,
    # reminder or e-mail can be added to them, nor can they be deleted.
    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not (obj is not None and obj.internal) and super().has_change_permission(
            request, obj
        )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not (obj is not None and obj.internal) and super().has_delete_permission(
            request, obj
        )

    autocomplete_fields = ["escalation_role"]
    list_select_related = ["escalation_role"]
    fieldsets = [
        (None, {"fields": ["code", "name", "name_en", "description", "is_active"]}),
        (_("Delivery"), {"fields": ["default_ttl_seconds", "default_severity"]}),
        (_("Escalation"), {"fields": ["escalate_after_seconds", "escalation_role"]}),
        (
            _("Until someone claims it"),
            {
                "fields": [
                    "remind_every_seconds",
                    "remind_max",
                    "email_after_seconds",
                    "claim_timeout_seconds",
                ]
            },
        ),
    ]

    @admin.display(description=_("Escalation"))
    def escalation(self, obj: MessageType) -> str:
        if obj.escalate_after_seconds is None:
            return gettext("never")
        if obj.escalation_role is None:
            return gettext("after %(seconds)d s, to no role") % {
                "seconds": obj.escalate_after_seconds
            }
        return gettext("after %(seconds)d s to %(role)s") % {
            "seconds": obj.escalate_after_seconds,
            "role": obj.escalation_role.name,
        }


class ReceiverFilter(admin.SimpleListFilter):
    """?receiver=<user id>: the subscriptions that reach that user, their own and their roles'
    (a user's admin page links here). The sidebar shows it only while it is in use: a list of
    every user would not fit there."""

    title = _("receiver")
    parameter_name = "receiver"

    def _user(self) -> DjangoUser | None:
        value = self.value()
        if not value or not value.isdigit() or int(value) >= 2**63:
            return None
        return DjangoUser.objects.filter(pk=int(value)).first()

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        user = self._user()
        return [] if user is None else [(str(user.pk), user.get_username())]

    def has_output(self) -> bool:
        return self.value() is not None

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() is None:
            return queryset
        user = self._user()
        if user is None:
            return queryset.none()
        return queryset.filter(Q(user=user) | Q(role__user=user)).distinct()


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["message_type", "warehouse", "subscriber", "created_at"]
    list_filter = [
        "message_type",
        "warehouse",
        ("role", admin.RelatedOnlyFieldListFilter),
        ReceiverFilter,
    ]
    # A user name finds their own subscriptions and their roles' (what they receive).
    search_fields = [
        "message_type__code",
        "message_type__name",
        "message_type__name_en",
        "warehouse__code",
        "warehouse__name",
        "user__username",
        "user__first_name",
        "user__last_name",
        "role__name",
        "role__user__username",
    ]
    autocomplete_fields = ["message_type", "warehouse", "user", "role"]
    list_select_related = ["message_type", "warehouse", "user", "role"]
    fieldsets = [
        (None, {"fields": ["message_type", "warehouse"]}),
        (_("Who receives it (a user or a role, not both)"), {"fields": ["user", "role"]}),
    ]
    change_list_template = "admin/subscriptions/subscription/change_list.html"

    @admin.display(description=_("Subscriber"), ordering="role__name")
    def subscriber(self, obj: Subscription) -> str:
        return obj.subscriber_label

    def get_urls(self) -> list:
        bulk = path(
            "bulk/",
            self.admin_site.admin_view(self.bulk_subscribe_view),
            name="subscriptions_subscription_bulk",
        )
        return [bulk, *super().get_urls()]

    def bulk_subscribe_view(self, request: HttpRequest) -> HttpResponse:
        """One form instead of one per combination: N types x M warehouses x users and roles."""
        if not self.has_add_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        form = BulkSubscribeForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            result = services.subscribe_many(
                message_types=list(form.cleaned_data["message_types"]),
                warehouses=list(form.cleaned_data["warehouses"]),
                users=list(form.cleaned_data["users"]),
                roles=list(form.cleaned_data["roles"]),
            )
            self.message_user(
                request,
                gettext(
                    "Created %(created)d subscriptions "
                    "(%(existing)d already existed and were kept)."
                )
                % {"created": result.created, "existing": result.existing},
                messages.SUCCESS,
            )
            return HttpResponseRedirect(reverse("admin:subscriptions_subscription_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Subscribe in bulk"),
            "form": form,
            "opts": self.model._meta,
            "media": self.media + form.media,
        }
        return render(request, "admin/subscriptions/subscription/bulk.html", context)


class SubscriptionInline(admin.TabularInline):
    model = Subscription
    extra = 0
    autocomplete_fields = ["message_type", "warehouse"]
    fields = ["message_type", "warehouse"]


class RoleSubscriptionInline(SubscriptionInline):
    fk_name = "role"
    verbose_name_plural = _("Notifications this role receives")


class UserSubscriptionInline(SubscriptionInline):
    fk_name = "user"
    verbose_name_plural = _("Notifications this user receives directly")


User = get_user_model()
admin.site.unregister(Group)
admin.site.unregister(User)


@admin.register(Group)
class RoleAdmin(GroupAdmin):
    inlines = [RoleSubscriptionInline]


@admin.register(User)
class UserWithSubscriptionsAdmin(UserAdmin):
    inlines = [UserSubscriptionInline]
    readonly_fields = ["receives"]

    def get_fieldsets(self, request: HttpRequest, obj: DjangoUser | None = None) -> Any:
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            return fieldsets  # the add form
        return [*fieldsets, (_("What this user receives"), {"fields": ["receives"]})]

    @admin.display(description=_("notifications"))
    def receives(self, user: DjangoUser) -> SafeString:
        return receptions_html(user)


def receptions_html(user: DjangoUser) -> SafeString:
    """What the user receives as a table (warehouse, type, every way it arrives), and a link
    to those subscriptions on the subscriptions page."""
    if not user.is_active:
        return format_html("<p>{}</p>", gettext("This user is inactive and receives nothing."))
    rows = selectors.receptions(user=user)
    link = format_html(
        '<p><a href="{}?receiver={}">{}</a></p>',
        reverse("admin:subscriptions_subscription_changelist"),
        user.pk,
        gettext("Show these subscriptions"),
    )
    if not rows:
        return format_html(
            "<p>{}</p>", gettext("Nothing: neither this user nor their roles subscribe.")
        )
    body = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                row.warehouse.code,
                str(row.message_type),
                format_html_join("", "<div>{}</div>", ((_through(t),) for t in row.through)),
            )
            for row in rows
        ),
    )
    return format_html(
        '<table class="receives"><thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead>'
        '<tbody>{}</tbody></table>{}<p class="help">{}</p>',
        gettext("Warehouse"),
        gettext("Message type"),
        gettext("How it arrives"),
        body,
        link,
        gettext(
            "Active warehouses and message types. Handovers of their roles' shifts arrive "
            "too (Shifts → Handovers)."
        ),
    )


def _through(through: selectors.Through) -> str:
    if through.way == selectors.Way.DIRECTLY:
        return gettext("directly")
    if through.way == selectors.Way.ROLE:
        return gettext("role %(name)s") % {"name": through.role}
    return gettext("escalated to role %(name)s") % {"name": through.role}
