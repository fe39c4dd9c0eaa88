"""Admin forms of the subscriptions app."""

from typing import Any

from django import forms
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils.translation import gettext_lazy as _

from .models import MessageType, Warehouse


class BulkSubscribeForm(forms.Form):
    """Subscribe several users and roles to several message types in several warehouses."""

    message_types = forms.ModelMultipleChoiceField(
        queryset=MessageType.objects.filter(internal=False),
        widget=FilteredSelectMultiple(_("message types"), is_stacked=False),
        label=_("Message types"),
    )
    warehouses = forms.ModelMultipleChoiceField(
        queryset=Warehouse.objects.all(),
        widget=FilteredSelectMultiple(_("warehouses"), is_stacked=False),
        label=_("Warehouses"),
    )
    roles = forms.ModelMultipleChoiceField(
        queryset=Group.objects.order_by("name"),
        required=False,
        widget=FilteredSelectMultiple(_("roles"), is_stacked=False),
        label=_("Roles"),
    )
    users = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        widget=FilteredSelectMultiple(_("users"), is_stacked=False),
        label=_("Users"),
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if not cleaned.get("roles") and not cleaned.get("users"):
            raise forms.ValidationError(_("Choose at least one role or user."))
        return cleaned
