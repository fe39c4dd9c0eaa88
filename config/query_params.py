"""Query parameters validated by a serializer's fields.

A poll's plain query (ids and numbers in range) is read without a serializer
(notifications/api/serializers.py: `inbox_query`, `warehouse_from_query`); everything else,
and every other endpoint's query, is validated here, by the serializer itself, so the values,
defaults and 400 bodies are DRF's (tests/config/test_query_params.py compares the plain paths
with it on generated input).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers


def validated(serializer_class: type[serializers.Serializer], params: Mapping[str, Any]) -> dict:
    """`serializer_class(data=params).validated_data`; raises the ValidationError its
    `is_valid(raise_exception=True)` raises."""
    serializer = serializer_class(data=params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
