"""The hot answers are built by plain functions (notifications/api/serializers.py:
`notification_dict`, `inbox_page_dict`, `unread_dict`), not by the serializers, which stay the
OpenAPI schema's description. On generated items both give the same answer: the same dicts,
keys in the same order, and the same bytes in JSON and in XML."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.renderers import JSONRenderer

from config.renderers import XMLRenderer
from notifications import hooks
from notifications.api import serializers as s
from notifications.domain import (
    Actor,
    InboxItem,
    InboxPage,
    Lifecycle,
    Notification,
    Severity,
    Status,
    UnreadSummary,
)

MS = st.integers(min_value=0, max_value=4_102_444_800_000)  # up to 2100
TEXT = st.text(max_size=20)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ACTORS = st.none() | st.builds(Actor, id=st.integers(1, 2**31), username=TEXT)

notifications = st.builds(
    Notification,
    id=st.uuids().map(str),
    message_type=st.text(min_size=1, max_size=10),
    warehouse=st.integers(1, 2**31),
    title=TEXT,
    body=TEXT,
    data=st.dictionaries(TEXT, JSON_VALUES, max_size=4),
    created_at_ms=MS,
    expires_at_ms=MS,
    severity=st.sampled_from(list(Severity)),
    key=st.none() | TEXT,
)
lifecycles = st.builds(
    Lifecycle,
    status=st.sampled_from(list(Status)),
    severity=st.sampled_from(list(Severity)),
    claimed_by=ACTORS,
    claimed_at_ms=st.none() | MS,
    resolved_by=ACTORS,
    resolved_at_ms=st.none() | MS,
    escalated_at_ms=st.none() | MS,
    occurrences=st.integers(1, 10_000),
)
items = st.builds(
    InboxItem,
    notification=notifications,
    cursor=st.integers(0, 2**53),
    read=st.booleans(),
    state=st.none() | lifecycles,
)


@pytest.fixture(autouse=True)
def actions_of_types(monkeypatch):
    """N's `actions` without the database: a type whose code starts with "A" has two."""

    def of(type_code: str) -> list[dict]:
        if not type_code.startswith("A"):
            return []
        shown = {"confirm_label": None, "available": True, "reason": None}
        return [
            {"code": "done", "label": "Done", "confirm_field": None, **shown},
            {"code": "moved", "label": type_code, "confirm_field": "bin", **shown},
        ]

    monkeypatch.setattr(hooks.actions, "of", of)


def same(plain: object, serialized: object) -> None:
    assert plain == serialized
    assert JSONRenderer().render(plain) == JSONRenderer().render(serialized)
    assert XMLRenderer().render(plain) == XMLRenderer().render(serialized)


@settings(max_examples=200, deadline=None)
@given(items)
def test_an_item_is_what_its_serializer_gives(item):
    same(s.notification_dict(item), s.NotificationOutput(item).data)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(items, max_size=4),
    st.integers(0, 10_000),
    st.integers(0, 2**53),
    st.booleans(),
)
def test_a_page_is_what_its_serializer_gives(found, unread, next_since, has_more):
    page = InboxPage(items=found, unread_count=unread, next_since=next_since, has_more=has_more)
    same(s.inbox_page_dict(page), s.InboxPageOutput(page).data)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(items, max_size=4),
    st.integers(0, 10_000),
    st.lists(st.integers(0, 99), min_size=3, max_size=3),
)
def test_an_unread_summary_is_what_its_serializer_gives(latest, unread, counts):
    summary = UnreadSummary(
        unread_count=unread,
        latest=latest,
        by_severity=dict(zip(Severity, counts, strict=True)),
    )
    same(s.unread_dict(summary), s.UnreadOutput(summary).data)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"warehouse": ""},
        {"warehouse": "x"},
        {"warehouse": "0"},
        {"warehouse": "-1"},
        {"warehouse": "true"},
        {"warehouse": "1.5"},
        {"warehouse": str(2**70)},
        {"warehouse": "inactive"},
        {"warehouse": "active"},
    ],
)
def test_the_warehouse_parameter_is_validated_as_its_serializer_does(params):
    """`warehouse_from_query` (the polls' hot path) answers what `WarehouseQuery` answers: the
    same warehouse, or the same 400 body."""
    from django.http import QueryDict
    from rest_framework.exceptions import ValidationError

    from subscriptions.models import Warehouse

    active = Warehouse.objects.create(code="SH01", name="Shanghai 1")
    inactive = Warehouse.objects.create(code="BJ02", name="Beijing 2", is_active=False)
    ids = {"active": str(active.pk), "inactive": str(inactive.pk)}
    query = QueryDict(mutable=True)
    for name, value in params.items():
        query[name] = ids.get(value, value)

    serializer = s.WarehouseQuery(data=query)
    if serializer.is_valid():
        assert s.warehouse_from_query(query).pk == serializer.validated_data["warehouse"].pk
        assert params == {"warehouse": "active"}
    else:
        with pytest.raises(ValidationError) as raised:
            s.warehouse_from_query(query)
        assert raised.value.detail == serializer.errors
