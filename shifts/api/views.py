"""Shift endpoints: who is on now (and, below, the handovers). Thin views."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import errors, timestamps
from config.users import signed_in
from config.validation import validated
from notifications.api.serializers import DetailOutput, WarehouseQuery, warehouse_from_query

from .. import handovers, selectors
from . import serializers as s


class OnNowView(APIView):
    @extend_schema(
        parameters=[WarehouseQuery],
        responses={200: s.OnNowOutput, 404: DetailOutput},
        summary="Who is on shift now in a warehouse, per role",
        description="For each role with shifts in the warehouse: its running shift (null when "
        "off shift), its members on shift now and its next start. Staff and members of those "
        "roles only (others 404).",
    )
    def get(self, request: Request) -> Response:
        warehouse = warehouse_from_query(request.query_params)
        warehouse_id = warehouse.pk
        user = signed_in(request)
        if not selectors.may_see_shifts(user=user, warehouse_id=warehouse_id):
            raise errors.NotFound(gettext("No shifts of yours in this warehouse."))
        at = timestamps.now()
        roles = selectors.on_now(warehouse_id=warehouse_id, at=at)
        return Response(s.on_now_json(warehouse_id=warehouse_id, at=at, roles=roles))


class HandoverListView(APIView):
    @extend_schema(
        parameters=[s.HandoverQuery],
        responses={200: s.HandoverListOutput, 404: DetailOutput},
        operation_id="handovers_list",
        summary="Handovers of a warehouse, newest first",
        description="Those of the roles I am in (staff: all); `role` narrows to one role "
        "(404 when it is not mine).",
    )
    def get(self, request: Request) -> Response:
        data = validated(s.HandoverQuery, request.query_params)
        handovers = selectors.handovers(
            user=signed_in(request),
            warehouse_id=data["warehouse"].pk,
            role_id=data.get("role"),
            limit=data["limit"],
        )
        if handovers is None:
            raise errors.NotFound(gettext("No handovers of yours for this role."))
        return Response({"results": [s.handover_json(h) for h in handovers]})


class HandoverView(APIView):
    @extend_schema(
        responses={200: s.HandoverOutput, 404: DetailOutput},
        summary="One handover",
        description="Members of its role and staff; others 404.",
    )
    def get(self, request: Request, handover_id: int) -> Response:
        handover = selectors.handover(user=signed_in(request), handover_id=handover_id)
        if handover is None:
            raise errors.NotFound(gettext("No such handover of yours."))
        return Response(s.handover_json(handover))


class HandoverAcceptView(APIView):
    @extend_schema(
        request=None,
        responses={200: s.HandoverOutput, 404: DetailOutput, 409: s.AcceptConflictOutput},
        summary="Accept a handover (once)",
        description="By a member of its role or staff. 200 the first time; 409 with "
        "`accepted_by` and `accepted_at` of the first acceptance after.",
    )
    def post(self, request: Request, handover_id: int) -> Response:
        handover = handovers.accept(user=signed_in(request), handover_id=handover_id)
        return Response(s.handover_json(handover))
