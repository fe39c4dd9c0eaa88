"""Shift endpoints: who is on now (and, below, the handovers). Thin views."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import errors, timestamps
from config.users import signed_in

from .. import selectors
from . import serializers as s


class OnNowView(APIView):
    @extend_schema(
        parameters=[s.WarehouseQuery],
        responses={200: s.OnNowOutput},
        summary="Who is on shift now in a warehouse, per role",
        description="For each role with shifts in the warehouse: its running shift (null when "
        "off shift), its members on shift now and its next start. Staff and members of those "
        "roles only (others 404).",
    )
    def get(self, request: Request) -> Response:
        query = s.WarehouseQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        warehouse_id = query.validated_data["warehouse"].pk
        user = signed_in(request)
        if not selectors.may_see_shifts(user=user, warehouse_id=warehouse_id):
            raise errors.NotFound(gettext("No shifts of yours in this warehouse."))
        at = timestamps.now()
        roles = selectors.on_now(warehouse_id=warehouse_id, at=at)
        return Response(s.on_now_json(warehouse_id=warehouse_id, at=at, roles=roles))
