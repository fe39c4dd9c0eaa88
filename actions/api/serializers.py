"""Input and output shapes of the alert actions API (SPEC 14)."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from notifications.api.serializers import ActorOutput, WarehouseQuery

SCAN_MAX_LENGTH = 200


class PressInput(WarehouseQuery):
    scan = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=SCAN_MAX_LENGTH,
        trim_whitespace=False,
        help_text="What was scanned, when the action has a confirm_field: it must equal the "
        "alert's data[confirm_field] (trimmed, case-blind).",
    )


class RunOutput(serializers.Serializer):
    id = serializers.UUIDField(help_text="Also the Idempotency-Key of every webhook call.")
    action = serializers.CharField(help_text="The action's code.")
    status = serializers.ChoiceField(choices=["pending", "succeeded", "failed"])
    attempts = serializers.IntegerField()
    result = serializers.CharField(
        allow_null=True,
        help_text=f"The webhook's answer, at most {settings.OUTBOX_RESULT_MAX_CHARS} "
        "characters (failed: the answer or the error); null while pending.",
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    by = ActorOutput(allow_null=True)


class PressOutput(serializers.Serializer):
    run = RunOutput()


class PressConflictOutput(serializers.Serializer):
    """Every 409 of a press: `claimed_by` when the alert is someone else's or resolved,
    `field` when the scan does not match it, neither when another press of the action ended
    meanwhile (try again)."""

    detail = serializers.CharField()
    claimed_by = ActorOutput(
        allow_null=True,
        required=False,
        help_text="Who holds the alert (null: resolved with nobody holding it); only when it "
        "is someone else's or resolved.",
    )
    field = serializers.CharField(
        required=False,
        help_text="The action's confirm_field, when the scan does not match the alert's value.",
    )


class RunsOutput(serializers.Serializer):
    results = RunOutput(many=True)


class ScanMismatchOutput(serializers.Serializer):
    detail = serializers.CharField()
    field = serializers.CharField(help_text="The action's confirm_field.")
