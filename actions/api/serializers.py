"""Input and output shapes of the alert actions API (SPEC 14)."""

from __future__ import annotations

import re
from enum import StrEnum
from http import HTTPStatus
from typing import Any

import requests
from django.conf import settings
from django.utils.translation import gettext, ngettext
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from config.timestamps import iso
from notifications.api.serializers import ActorOutput, ConflictOutput, WarehouseQuery

from ..models import ActionRun, RunStatus

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


# --- A run as answers and the page show it ---------------------------------------------


def run_dict(run: ActionRun) -> dict[str, Any]:
    """R (SPEC 14): {"id", "action", "status", "attempts", "result", "created_at",
    "finished_at", "by"}, and `error` (`run_error`)."""
    message = run.message
    return {
        "id": str(run.pk),
        "action": run.action.code,
        "status": str(run.status),
        "attempts": int(run.attempts if message is None else message.attempts),
        "result": run.result if run.status != RunStatus.PENDING else None,
        "created_at": iso(run.created_at),
        "finished_at": None if run.finished_at is None else iso(run.finished_at),
        "by": None if run.user_id is None else {"id": run.user_id, "username": run.username},
        "error": run_error(run),
    }


class ErrorKind(StrEnum):
    """What went wrong with a webhook call, as R's `error.kind` says it."""

    ANSWERED = "answered"  # the WMS answered, with a status that is not success
    TIMEOUT = "timeout"  # no answer within ALERT_WEBHOOK_TIMEOUT_SECONDS
    UNREACHABLE = "unreachable"  # no connection (refused, no route, TLS not accepted)
    REFUSED = "refused"  # this server may not call the URL (ALERT_WEBHOOK_ALLOWED_HOSTS)
    OTHER = "other"


_HTTP_STATUS = re.compile(r"HTTP (\d{3})")


def run_error(run: ActionRun) -> dict[str, Any] | None:
    """What went wrong, for the page to say (SPEC 14, "Outcomes on the page"): `{"kind",
    "http_status", "message"}`, the message in words of the active language. A failed run:
    why it failed (and how often it was tried); a pending one: why its last attempt failed,
    if one did (it is tried again); otherwise None. Read from the outbox message's last error,
    as `Webhooks.send` wrote it."""
    if run.status == RunStatus.SUCCEEDED:
        return None
    message = run.message
    error = "" if message is None else message.last_error
    if not error:
        if run.status == RunStatus.PENDING:
            return None
        error = run.result or "?"
    kind, status, words = _described(error)
    attempts = 0 if message is None else int(message.attempts)
    if run.status == RunStatus.PENDING:
        words = f"{words} {gettext('It will be tried again.')}"
    elif attempts > 1:
        tried = ngettext("Tried %(count)s time.", "Tried %(count)s times.", attempts)
        words = f"{words} {tried % {'count': attempts}}"
    return {"kind": str(kind), "http_status": status, "message": words}


def _described(error: str) -> tuple[ErrorKind, int | None, str]:
    """A webhook call's error (`Webhooks.send`: "HTTP 404", "refused: …", "<requests'
    exception>: …") as its kind, its HTTP status and a sentence."""
    answered = _HTTP_STATUS.fullmatch(error.strip())
    if answered:
        status = int(answered[1])
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            return (
                ErrorKind.ANSWERED,
                status,
                gettext("The WMS answered %(status)s.") % {"status": status},
            )
        words = gettext("The WMS answered %(status)s (%(phrase)s).")
        return ErrorKind.ANSWERED, status, words % {"status": status, "phrase": phrase}
    if error.startswith("refused:"):
        return (
            ErrorKind.REFUSED,
            None,
            gettext(
                "This server may not call the action's webhook (its address is not allowed "
                "any more): ask an administrator."
            ),
        )
    name = error.split(":", 1)[0].strip()
    raised = getattr(requests.exceptions, name, None)
    if isinstance(raised, type) and issubclass(raised, requests.RequestException):
        if issubclass(raised, requests.Timeout):
            seconds = f"{settings.ALERT_WEBHOOK_TIMEOUT_SECONDS:g}"
            words = gettext("The WMS did not answer within %(seconds)s seconds.")
            return ErrorKind.TIMEOUT, None, words % {"seconds": seconds}
        if issubclass(raised, requests.exceptions.SSLError):
            words = gettext("The WMS could not be reached: its certificate was not accepted.")
            return ErrorKind.UNREACHABLE, None, words
        return ErrorKind.UNREACHABLE, None, gettext("The WMS could not be reached.")
    words = gettext("The action could not be done (%(error)s).")
    return ErrorKind.OTHER, None, words % {"error": error[:200]}
