"""Query parameters validated by a serializer's fields, without a serializer per request.

A DRF serializer deep-copies its declared fields every time one is made; for a poll that
answers in a fraction of a millisecond that copy was a sixth of the view (issue 22's profile).
The fields of one instance per serializer class, made once, validate every request instead:
the same fields, so the same values, defaults and 400 bodies (tests/config/test_query_params.py
compares them on generated input). For query serializers only: no `validate_<field>` or
`validate` hooks, no nested serializers.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.fields import SkipField

_prepared: dict[type[serializers.Serializer], Any] = {}
_lock = threading.Lock()


def _fields(serializer_class: type[serializers.Serializer]) -> Any:
    fields = _prepared.get(serializer_class)
    if fields is None:
        with _lock:
            fields = _prepared.setdefault(serializer_class, serializer_class().fields)
    return fields


def validated(serializer_class: type[serializers.Serializer], params: Mapping[str, Any]) -> dict:
    """What `serializer_class(data=params).validated_data` would be; raises the ValidationError
    its `is_valid(raise_exception=True)` would. Its fields hold no state per call."""
    values: dict[str, Any] = {}
    errors: dict[str, Any] = {}
    for name, field in _fields(serializer_class).items():
        try:
            values[name] = field.run_validation(field.get_value(params))
        except serializers.ValidationError as exc:
            errors[name] = exc.detail
        except SkipField:
            pass
    if errors:
        raise serializers.ValidationError(errors)
    return values
