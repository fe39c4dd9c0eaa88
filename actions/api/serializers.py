"""Input and output shapes of the alert actions API (SPEC 14)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from notifications.api.serializers import ActorOutput, ConflictOutput, WarehouseQuery

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


class RunErrorOutput(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["answered", "timeout", "unreachable", "refused", "other"],
        help_text="answered: the WMS answered with a status that is not success; timeout: no "
        "answer in time; unreachable: no connection; refused: this server may not call the "
        "URL any more.",
    )
    http_status = serializers.IntegerField(
        allow_null=True, help_text="The WMS's HTTP status (kind answered); else null."
    )
    message = serializers.CharField(help_text="What went wrong, in the request's language.")


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
    error = RunErrorOutput(
        allow_null=True,
        help_text="failed: why; pending: why the last attempt failed, if one did (it is tried "
        "again); succeeded: null.",
    )


class PressOutput(serializers.Serializer):
    run = RunOutput()


class RunsOutput(serializers.Serializer):
    results = RunOutput(many=True)


class ScanMismatchOutput(serializers.Serializer):
    detail = serializers.CharField()
    field = serializers.CharField(
        help_text="The action's confirm_field: the scan does not match the alert's value, or "
        "the alert's data has none."
    )


# A press's 409 is one of two bodies: who holds the alert (someone else claimed it, it is
# resolved), or the scan's field. Each has its own required key, so exactly one matches.
PressConflictOutput = PolymorphicProxySerializer(
    component_name="PressConflictOutput",
    serializers=[ConflictOutput, ScanMismatchOutput],
    resource_type_field_name=None,
)
