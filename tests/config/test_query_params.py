"""The poll's plain query readers validate as the serializer does: the same values and defaults, the
same 400 bodies, on generated query strings."""

from __future__ import annotations

import pytest
from django.http import QueryDict
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError

from config.validation import validated
from notifications.api.serializers import (
    InboxQuery,
    ReportQuery,
    WarehouseQuery,
    inbox_query,
    warehouse_from_query,
)
from subscriptions.models import Warehouse

pytestmark = pytest.mark.django_db

VALUES = st.sampled_from(
    [
        "",
        "0",
        "1",
        "-1",
        "7",
        "50",
        "51",
        "1000",
        "true",
        "false",
        "yes",
        "off",
        "1.5",
        str(2**53),
        str(2**53 + 1),
        str(2**70),
        "active",
        "inactive",
        "x",
    ]
) | st.text(max_size=6)
NAMES = st.sampled_from(["warehouse", "since", "limit", "include_read", "days", "other"])


@pytest.fixture
def warehouses() -> dict[str, str]:
    active = Warehouse.objects.create(code="SH01", name="Shanghai 1")
    inactive = Warehouse.objects.create(code="BJ02", name="Beijing 2", is_active=False)
    return {"active": str(active.pk), "inactive": str(inactive.pk)}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    serializer_class=st.sampled_from([WarehouseQuery, InboxQuery, ReportQuery]),
    pairs=st.lists(st.tuples(NAMES, VALUES), max_size=6),
)
@example(
    serializer_class=InboxQuery,
    pairs=[("warehouse", "active"), ("since", "7"), ("include_read", "true")],
)
@example(serializer_class=InboxQuery, pairs=[("warehouse", "active"), ("limit", "51")])
@example(
    serializer_class=WarehouseQuery, pairs=[("warehouse", "inactive"), ("warehouse", "active")]
)
def test_the_same_answer_as_the_serializer(warehouses, serializer_class, pairs):
    query = QueryDict(mutable=True)
    for name, value in pairs:
        query.appendlist(name, warehouses.get(value, value))

    serializer = serializer_class(data=query)
    if serializer.is_valid():
        found = validated(serializer_class, query)
        expected = dict(serializer.validated_data)
        if "warehouse" in expected:
            assert found.pop("warehouse").pk == expected.pop("warehouse").pk
        assert found == expected
    else:
        with pytest.raises(ValidationError) as raised:
            validated(serializer_class, query)
        assert raised.value.detail == serializer.errors


# Values next to the plain ones: other spellings, padded, out of range, a full-width digit.
PLAIN_OR_NEARLY = st.sampled_from(["True", "on", "00", "007", "200", "201", " 5", "\uff15", "1"])


def _same_as_the_serializer(serializer_class, query, found_by) -> None:
    serializer = serializer_class(data=query)
    if serializer.is_valid():
        found = found_by(query)
        expected = dict(serializer.validated_data)
        assert found.pop("warehouse").pk == expected.pop("warehouse").pk
        assert found == expected
    else:
        with pytest.raises(ValidationError) as raised:
            found_by(query)
        assert raised.value.detail == serializer.errors


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pairs=st.lists(st.tuples(NAMES, VALUES | PLAIN_OR_NEARLY), max_size=6))
@example(pairs=[("warehouse", "active"), ("since", "7"), ("include_read", "true")])
@example(pairs=[("warehouse", "active"), ("limit", "200"), ("include_read", "0")])
@example(pairs=[("warehouse", "active"), ("limit", "201")])
@example(pairs=[("warehouse", "active"), ("since", ""), ("include_read", "on")])
@example(pairs=[("warehouse", "inactive"), ("warehouse", "active"), ("since", "0")])
@example(pairs=[("warehouse", "active"), ("since", str(2**53 + 1))])
def test_the_plain_paths_answer_as_the_serializer(warehouses, pairs):
    """inbox_query and warehouse_from_query read plain values without the fields."""
    query = QueryDict(mutable=True)
    for name, value in pairs:
        query.appendlist(name, warehouses.get(value, value))

    _same_as_the_serializer(InboxQuery, query, lambda q: inbox_query(q).validated_data())
    _same_as_the_serializer(WarehouseQuery, query, lambda q: {"warehouse": warehouse_from_query(q)})
