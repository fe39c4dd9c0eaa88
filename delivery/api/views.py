"""GET /api/v1/delivery/ (SPEC 16): every active warehouse against the objective. Staff only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications.api.serializers import DetailOutput

from .. import selectors
from ..objective import Objective
from . import serializers as s


class DeliveryView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        responses={200: s.DeliveryOutput, 403: DetailOutput},
        summary="Delivery per warehouse against the objective, measured by canaries",
        description="Staff only. Each active warehouse's last canary (seconds to reach a "
        "stream process and a poll), the last hour's figures and its status: `ok`, `late` "
        "(the last canary was over the objective on a path, or has not arrived "
        "CANARY_LATE_SECONDS after its publish) or `missing` (no canary for three intervals).",
    )
    def get(self, request: Request) -> Response:
        return Response(s.delivery_json(Objective.configured(), selectors.readings()))
