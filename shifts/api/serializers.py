"""Input validation and output shapes of the shifts API (SPEC section 13)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from rest_framework import serializers

from config.timestamps import iso
from notifications.api.serializers import WarehouseField

from ..selectors import RoleOnNow


class WarehouseQuery(serializers.Serializer):
    warehouse = WarehouseField()


class PersonOutput(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class RoleOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class RunningShiftOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    starts = serializers.CharField(help_text="When this run started (ISO 8601, UTC).")
    ends = serializers.CharField(help_text="When this run ends (ISO 8601, UTC).")


class RoleOnNowOutput(serializers.Serializer):
    role = RoleOutput()
    shift = RunningShiftOutput(allow_null=True, help_text="null: the role is off shift now.")
    members = PersonOutput(many=True, help_text="Its active members, on shift now.")
    next_start = serializers.CharField(
        allow_null=True, help_text="The next start of one of its shifts (ISO 8601, UTC)."
    )


class OnNowOutput(serializers.Serializer):
    warehouse = serializers.IntegerField()
    at = serializers.CharField()
    results = RoleOnNowOutput(many=True)


def on_now_json(*, warehouse_id: int, at: dt.datetime, roles: list[RoleOnNow]) -> dict[str, Any]:
    """The answer of GET shifts/on-now/ from selectors.on_now's rows."""
    results = []
    for row in roles:
        running = row.running
        results.append(
            {
                "role": {"id": row.role_id, "name": row.role_name},
                "shift": None
                if running is None
                else {
                    "id": running.shift.id,
                    "name": running.shift.name,
                    "starts": iso(running.occurrence.start),
                    "ends": iso(running.occurrence.end),
                },
                "members": [{"id": i, "username": name} for i, name in row.members],
                "next_start": None if row.next_start is None else iso(row.next_start),
            }
        )
    return {"warehouse": warehouse_id, "at": iso(at), "results": results}
