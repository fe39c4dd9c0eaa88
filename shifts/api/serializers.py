"""Input validation and output shapes of the shifts API (SPEC section 13)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from rest_framework import serializers

from config.timestamps import iso
from notifications.api.serializers import WarehouseField

from ..selectors import RoleOnNow


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


class HandoverQuery(serializers.Serializer):
    warehouse = WarehouseField()
    role = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)


def handover_json(handover: Any) -> dict[str, Any]:
    """H: one handover as the API shows it."""
    accepted = handover.accepted_by
    return {
        "id": handover.pk,
        "warehouse": handover.warehouse_id,
        "role": {"id": handover.role_id, "name": handover.role.name},
        "shift": {"id": handover.shift_id, "name": handover.shift_name},
        "starts": iso(handover.starts),
        "ends": iso(handover.ends),
        "created_at": iso(handover.created_at),
        "notification": handover.notification_id or None,
        "content": handover.content,
        "accepted_by": None
        if accepted is None
        else {"id": accepted.pk, "username": accepted.get_username()},
        "accepted_at": None if handover.accepted_at is None else iso(handover.accepted_at),
    }


class ShiftRefOutput(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="null once the shift was deleted.")
    name = serializers.CharField()


class HandoverOutput(serializers.Serializer):
    """H (documentation of the shape; views build it with handover_json)."""

    id = serializers.IntegerField()
    warehouse = serializers.IntegerField()
    role = RoleOutput()
    shift = ShiftRefOutput()
    starts = serializers.CharField()
    ends = serializers.CharField()
    created_at = serializers.CharField()
    notification = serializers.CharField(allow_null=True)
    content = serializers.JSONField(
        help_text="open, claimed_off_shift, escalated, resolved, snoozed (lists of alerts, "
        "at most SHIFT_HANDOVER_MAX_ITEMS each), counts, median_time_to_claim_seconds, "
        "released. `snoozed` lists alerts members of the role snoozed past the change (with "
        "`snoozed_by` and `until`)."
    )
    accepted_by = PersonOutput(allow_null=True)
    accepted_at = serializers.CharField(allow_null=True)


class AcceptConflictOutput(serializers.Serializer):
    """409 of accept: someone accepted it first."""

    detail = serializers.CharField()
    accepted_by = PersonOutput(allow_null=True, help_text="Who accepted it first.")
    accepted_at = serializers.CharField(allow_null=True, help_text="When (ISO 8601, UTC).")


class HandoverListOutput(serializers.Serializer):
    results = HandoverOutput(many=True)
