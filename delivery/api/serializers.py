"""The delivery objective's JSON (SPEC 16): GET /api/v1/delivery/."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from config.timestamps import ms_to_datetime
from subscriptions.models import Warehouse

from ..objective import Objective, Reading


class ObjectiveOutput(serializers.Serializer):
    seconds = serializers.FloatField()
    target = serializers.FloatField()


class WarehouseRef(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField()


class LastOutput(serializers.Serializer):
    at = serializers.DateTimeField(help_text="When the last canary was published.")
    stream_seconds = serializers.FloatField(
        allow_null=True, help_text="null: no process serves streams, or not arrived yet."
    )
    poll_seconds = serializers.FloatField(allow_null=True, help_text="null: not arrived yet.")


class HourOutput(serializers.Serializer):
    canaries = serializers.IntegerField()
    within_objective = serializers.IntegerField()
    p50 = serializers.FloatField(
        allow_null=True, help_text="Seconds, of each canary's slowest path."
    )
    p99 = serializers.FloatField(allow_null=True)


class WarehouseDeliveryOutput(serializers.Serializer):
    warehouse = WarehouseRef()
    last = LastOutput(allow_null=True)
    hour = HourOutput()
    status = serializers.ChoiceField(choices=["ok", "late", "missing"])


class DeliveryOutput(serializers.Serializer):
    objective = ObjectiveOutput()
    results = WarehouseDeliveryOutput(many=True)


def delivery_json(
    objective: Objective, readings: list[tuple[Warehouse, Reading]]
) -> dict[str, Any]:
    return {
        "objective": {"seconds": objective.seconds, "target": objective.target},
        "results": [
            {
                "warehouse": {"id": warehouse.pk, "code": warehouse.code},
                "last": None
                if reading.last is None
                else {
                    "at": ms_to_datetime(reading.last.sent_ms),
                    "stream_seconds": reading.stream_seconds(),
                    "poll_seconds": reading.poll_seconds(),
                },
                "hour": {
                    "canaries": reading.hour.canaries,
                    "within_objective": reading.hour.within_objective,
                    "p50": reading.hour.p50,
                    "p99": reading.hour.p99,
                },
                "status": str(reading.status),
            }
            for warehouse, reading in readings
        ],
    }
