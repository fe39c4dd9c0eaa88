"""The floor of an authenticated API request: a DRF view that returns a constant.

It passes through the same middleware, the same authentication (token or session), the same
permission and throttle classes and the same JSON renderer as the notification endpoints, and
does nothing else, so a poll can be no faster than this on the same server.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

CONSTANT = {"results": [], "unread_count": 0, "next_since": 0}


class FloorView(APIView):
    def get(self, request: Request) -> Response:
        return Response(CONSTANT)


def plain_floor(request: HttpRequest) -> HttpResponse:
    """The same constant from a plain Django view: the same middleware, the browser's session
    user (read, as any answer for a user must), and no DRF at all. It shows what the framework
    itself costs, against the peer's plain views (benchmarks/peer.py)."""
    if not request.user.is_authenticated:
        return JsonResponse({"detail": "Authentication credentials were not provided."}, status=403)
    return JsonResponse(CONSTANT)
