"""Request input validated by a serializer's fields: one call for a body or a query."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers


def validated(serializer_class: type[serializers.Serializer], data: Mapping[str, Any]) -> dict:
    """`serializer_class(data=data).validated_data`; raises the ValidationError its
    `is_valid(raise_exception=True)` raises (a 400 naming the fields)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
