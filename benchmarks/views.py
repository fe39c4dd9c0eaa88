"""The floor of an authenticated API request: a DRF view that returns a constant.

It passes through the same middleware, the same authentication (token or session), the same
permission and throttle classes and the same JSON renderer as the notification endpoints, and
does nothing else, so a poll can be no faster than this on the same server.
"""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

CONSTANT = {"results": [], "unread_count": 0, "next_since": 0}


class FloorView(APIView):
    def get(self, request: Request) -> Response:
        return Response(CONSTANT)
