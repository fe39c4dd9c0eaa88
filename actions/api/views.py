"""Alert action endpoints: press one (`POST .../actions/<code>/`), list the runs."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import idempotency
from config.users import signed_in
from config.validation import validated
from notifications.api import serializers as ns

from .. import selectors, services
from . import serializers as s


class PressView(APIView):
    @extend_schema(
        request=s.PressInput,
        parameters=[idempotency.OPENAPI_HEADER],
        responses={
            200: s.PressOutput,
            202: s.PressOutput,
            404: ns.DetailOutput,
            409: s.PressConflictOutput,
            422: ns.DetailOutput,
        },
        summary="Run an action on the alert, once",
        description="202 with the new run; 200 with the earlier run while one of this action "
        "on this alert is pending or succeeded. An open alert is claimed by me first; one "
        "claimed by someone else or resolved is 409 (`claimed_by`). With a confirm_field, "
        "`scan` must match data[confirm_field] (trimmed, case-blind), else 409 with `field` "
        "and nothing runs. The webhook is called from the outbox, with the run's id as "
        "Idempotency-Key. An Idempotency-Key sent before with another request is 422.",
    )
    def post(self, request: Request, notification_id: str, code: str) -> Response:
        key = request.headers.get(idempotency.HEADER)
        payload = validated(s.PressInput, request.data)
        pressed = services.press(
            user=signed_in(request),
            warehouse_id=payload["warehouse"].pk,
            notification_id=str(notification_id),
            code=str(code),
            scan=payload.get("scan"),
            idempotency_key=key,
        )
        if pressed.replayed is not None:
            return idempotency.answered(
                pressed.replayed, replayed=True, status=status.HTTP_202_ACCEPTED
            )
        if pressed.run is None:  # only a replay has no run of its own
            raise RuntimeError("a press answered neither a run nor a replay")
        answer = {"run": s.run_dict(pressed.run)}
        return Response(
            answer, status=status.HTTP_202_ACCEPTED if pressed.created else status.HTTP_200_OK
        )


class RunsView(APIView):
    @extend_schema(
        parameters=[ns.WarehouseQuery],
        responses={200: s.RunsOutput, 404: ns.DetailOutput},
        summary="The runs of the alert's actions, newest first",
    )
    def get(self, request: Request, notification_id: str) -> Response:
        warehouse = ns.warehouse_from_query(request.query_params)
        runs = selectors.runs_of(
            user=signed_in(request), warehouse_id=warehouse.pk, notification_id=str(notification_id)
        )
        return Response({"results": [s.run_dict(run) for run in runs]})
