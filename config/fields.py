"""Serializer fields shared by the API apps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail
from rest_framework.utils import html

from config.http_errors import MAX_ERRORS


class BoundedListField(serializers.ListField):
    """A ListField that checks its length before its items and stops after a few bad ones.

    DRF's ListField validates every item first and the length after, so 300,000 bad items
    cost seconds and a 12 MB error answer before "too long" was ever said.
    """

    def to_internal_value(self, data: Any) -> list[Any]:
        if html.is_html_input(data):
            data = html.parse_html_list(data, default=[])
        if isinstance(data, str | Mapping) or not hasattr(data, "__len__"):
            self.fail("not_a_list", input_type=type(data).__name__)
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)

    def run_child_validation(self, data: list[Any]) -> list[Any]:
        result = []
        # Keyed by position as text: what JSON (and the XML renderer) make of it anyway.
        errors: dict[str, Any] = {}
        for index, item in enumerate(data):
            try:
                result.append(self.child.run_validation(item))
            except serializers.ValidationError as exc:
                errors[str(index)] = exc.detail
            except DjangoValidationError as exc:
                errors[str(index)] = get_error_detail(exc)
            if len(errors) >= MAX_ERRORS:
                break
        if errors:
            raise serializers.ValidationError(errors)
        return result
