"""Middleware for failures outside DRF's reach: oversized API bodies and Redis errors in pages."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from django.utils.translation import gettext as _

from config.http_errors import REDIS_DOWN_DETAIL
from config.redis import REDIS_UNAVAILABLE

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"


class ApiBodyLimitMiddleware:
    """A body announced larger than DATA_UPLOAD_MAX_MEMORY_SIZE gets a JSON 413 at once.

    Before authentication, parsing or anything else reads it. (The parsers cap what they read
    as well, for bodies that do not announce their length.)
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and request.path.startswith(API_PREFIX):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                return JsonResponse(
                    {
                        "detail": _("The request body is larger than the limit of %(limit)d bytes.")
                        % {"limit": limit}
                    },
                    status=413,
                )
        return self.get_response(request)


class RedisErrorMiddleware:
    """Views outside DRF (the warehouse page, the admin) answer 503 on a Redis error, not 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, REDIS_UNAVAILABLE):
            return None
        logger.error("Redis error while serving %s", request.path, exc_info=exception)
        detail = str(REDIS_DOWN_DETAIL)
        response: HttpResponse
        if request.path.startswith(API_PREFIX) or not request.accepts("text/html"):
            response = JsonResponse({"detail": detail}, status=503)
        else:
            response = HttpResponse(
                f"<!doctype html><title>503</title><p>{escape(detail)}</p>", status=503
            )
        response["Retry-After"] = str(settings.REDIS_RETRY_AFTER_SECONDS)
        return response
