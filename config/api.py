"""API-wide behaviour: turning an unreachable Redis into a 503 the clients can retry."""

import logging
from typing import Any

from django.conf import settings
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config.redis import REDIS_UNAVAILABLE

logger = logging.getLogger(__name__)

REDIS_DOWN_DETAIL = "The message store is unavailable right now; please retry shortly."


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus: Redis unreachable gives 503 with Retry-After, never a traceback."""
    if isinstance(exc, REDIS_UNAVAILABLE):
        logger.warning("Redis unavailable while serving %s: %s", context.get("view"), exc)
        return Response(
            {"detail": REDIS_DOWN_DETAIL},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(settings.REDIS_RETRY_AFTER_SECONDS)},
        )
    return drf_exception_handler(exc, context)
