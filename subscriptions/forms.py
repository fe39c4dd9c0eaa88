"""Admin forms of the subscriptions app."""

from typing import Any

from django import forms
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from .models import MessageType, Warehouse


class BulkSubscribeForm(forms.Form):
    """Subscribe several users and roles to several message types in several warehouses."""

    message_types = forms.ModelMultipleChoiceField(
        queryset=MessageType.objects.filter(internal=False),
        widget=FilteredSelectMultiple("message types", is_stacked=False),
    )
    warehouses = forms.ModelMultipleChoiceField(
        queryset=Warehouse.objects.all(),
        widget=FilteredSelectMultiple("warehouses", is_stacked=False),
    )
    roles = forms.ModelMultipleChoiceField(
        queryset=Group.objects.order_by("name"),
        required=False,
        widget=FilteredSelectMultiple("roles", is_stacked=False),
    )
    users = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        widget=FilteredSelectMultiple("users", is_stacked=False),
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if not cleaned.get("roles") and not cleaned.get("users"):
            raise forms.ValidationError("Choose at least one role or user.")
        return cleaned
