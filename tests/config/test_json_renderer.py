"""config.json_renderer: the same answers as DRF's JSONRenderer, whatever the data."""

from __future__ import annotations

import datetime
import json
import uuid
from decimal import Decimal
from enum import StrEnum

from django.utils.translation import gettext_lazy
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import renderers

from config.json_renderer import JSONRenderer

ours = JSONRenderer()
drf = renderers.JSONRenderer()


class Colour(StrEnum):
    RED = "red"


# Text of every kind, U+2028 / U+2029 and characters JSON must escape included (no lone
# surrogates: they are not text either renderer can send).
texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12) | st.sampled_from(
    ["\u2028", "a\u2029b", '"', "\\", "\x00\x1f", "é中文🙂", "</script>"]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


def has_float(value: object) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    return False


@settings(max_examples=400, deadline=None)
@given(values)
def test_any_json_value_renders_as_drf_renders_it(value):
    mine, theirs = ours.render(value), drf.render(value)
    if value is None:  # an empty body, for both
        assert mine == theirs == b""
        return
    assert json.loads(mine) == json.loads(theirs)
    if not has_float(value):
        # Floats in exponent form may be spelled differently; everything else is byte for byte.
        assert mine == theirs


def test_types_only_drf_knows_are_rendered_by_its_encoder():
    value = {
        "at": datetime.datetime(2026, 11, 26, 1, 2, 3, 456789, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 11, 26),
        "id": uuid.UUID("0b4c6f3e-7d7e-4c43-9a57-5d3f3c1a7e11"),
        "amount": Decimal("12.50"),
        "detail": gettext_lazy("Not found."),
        "colour": Colour.RED,
        "pair": (1, "two"),
    }
    assert ours.render(value) == drf.render(value)


def test_what_orjson_refuses_is_rendered_by_drf():
    refused: list[object] = [{"big": 2**70}, {1: "a key that is not text"}]
    for value in refused:
        assert ours.render(value) == drf.render(value)


def test_indented_answers_and_nothing_are_drfs():
    value = {"a": [1, 2], "b": "c"}
    indented = "application/json; indent=4"
    assert ours.render(value, indented) == drf.render(value, indented)
    assert ours.render(None) == drf.render(None) == b""
