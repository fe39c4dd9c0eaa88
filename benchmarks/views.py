"""The floor of an authenticated API request: a DRF view that returns a constant.

It passes through the same middleware, the same authentication (token or session), the same
permission and throttle classes and the same JSON renderer as the notification endpoints, and
does nothing else, so a poll can be no faster than this on the same server.

Two more floors split the distance from the floor to the unread summary in three:
`RoundTripFloorView` adds one Redis round trip that does nothing (what reading Redis at all
costs), `ReadModelFloorView` the summary's own call to the read model instead (what that call's
work adds), and the summary adds the API around that call.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.redis import get_redis
from config.users import signed_in
from directory.held import HeldDirectoryMixin
from notifications import selectors

CONSTANT = {"results": [], "unread_count": 0, "next_since": 0}


class FloorView(APIView):
    def get(self, request: Request) -> Response:
        return Response(CONSTANT)


class RoundTripFloorView(APIView):
    """The floor plus one Redis round trip (`PING`) through the product's client."""

    def get(self, request: Request) -> Response:
        get_redis().ping()
        return Response(CONSTANT)


class ReadModelFloorView(HeldDirectoryMixin, APIView):
    """The floor plus the unread summary's read-model call for the user and the warehouse
    `?warehouse=` names: the summary's own selector, so the user's roles as the directory
    holds them, the call's one round trip (its script, the held directory confirmed in it) and
    the reply parsed into items. The constant is returned: no query parsing, no ETag, no
    rendering of the items."""

    def get(self, request: Request) -> Response:
        selectors.unread_summary_if_changed(
            user=signed_in(request),
            warehouse_id=int(request.query_params["warehouse"]),
            if_none_match=None,
        )
        return Response(CONSTANT)


def plain_floor(request: HttpRequest) -> HttpResponse:
    """The same constant from a plain Django view: the same middleware, the browser's session
    user (read, as any answer for a user must), and no DRF at all. It shows what the framework
    itself costs, against the peer's plain views (benchmarks/peer.py)."""
    if not request.user.is_authenticated:
        return JsonResponse({"detail": "Authentication credentials were not provided."}, status=403)
    return JsonResponse(CONSTANT)
