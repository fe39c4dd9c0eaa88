"""API-wide behaviour: every failure becomes one small JSON answer, mapped here and only here.

- Domain errors (config.errors) become 400 / 403 / 404 / 409 / 503 by their kind.
- Every Redis error becomes 503 with Retry-After, never a traceback: unreachable, timeout, out
  of memory, read-only replica, busy script, cluster trouble, a script that failed.
- A body over DATA_UPLOAD_MAX_MEMORY_SIZE is 413, too many form fields 400.
- Error answers stay small: the first few errors only, long texts cut.
- A refusal answered again from an Idempotency-Key's record says so (`Idempotent-Replayed`).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.utils.translation import gettext as _
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import exceptions
from rest_framework.exceptions import ErrorDetail
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config import idempotency
from config.errors import DomainError, ErrorKind
from config.http_errors import (
    MAX_ERROR_TEXT,
    MAX_ERRORS,
    REDIS_DOWN_DETAIL,
    Conflict,
    RequestTooLarge,
    Unavailable,
    Unprocessable,
)
from config.redis import REDIS_UNAVAILABLE

logger = logging.getLogger(__name__)

_BY_KIND: dict[ErrorKind, type[exceptions.APIException]] = {
    ErrorKind.INVALID: exceptions.ValidationError,
    ErrorKind.FORBIDDEN: exceptions.PermissionDenied,
    ErrorKind.NOT_FOUND: exceptions.NotFound,
    ErrorKind.CONFLICT: Conflict,
    ErrorKind.UNPROCESSABLE: Unprocessable,
    ErrorKind.UNAVAILABLE: Unavailable,
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, after turning domain, Redis and request-size errors into API errors."""
    response = drf_exception_handler(as_api_exception(exc, context), context)
    if response is not None and response.status_code >= 400:
        response.data = trimmed(response.data)
        if isinstance(exc, DomainError) and exc.extra and isinstance(response.data, dict):
            # Added after DRF's handler, which would turn every value into a string.
            response.data = {**response.data, **exc.extra}
        if isinstance(exc, DomainError) and exc.replayed:
            response[idempotency.REPLAYED_HEADER] = "true"
    return response


def as_api_exception(exc: Exception, context: dict[str, Any] | None = None) -> Exception:
    """The APIException a domain or infrastructure error stands for (others unchanged)."""
    if isinstance(exc, DomainError):
        api_class = _BY_KIND[exc.kind]
        if exc.kind is ErrorKind.INVALID:
            # DRF's per-field shape, `{"title": ["..."]}`, as the serializers answer.
            detail: Any = (
                {"detail": exc.message} if exc.field is None else {exc.field: [exc.message]}
            )
            return api_class(detail, code=exc.code)
        return api_class(exc.message, code=exc.code)
    if isinstance(exc, REDIS_UNAVAILABLE):
        view = (context or {}).get("view")
        if isinstance(exc, RedisConnectionError | RedisTimeoutError):
            logger.warning("Redis unavailable while serving %s: %s", view, exc)
        else:
            # Out of memory, read-only, busy, a failed script...: worth a traceback in the log.
            logger.error("Redis error while serving %s", view, exc_info=exc)
        return Unavailable(REDIS_DOWN_DETAIL, code="redis_unavailable")
    if isinstance(exc, RequestDataTooBig):
        return RequestTooLarge()
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return exceptions.ParseError(_("The request has too many fields."))
    return exc


def trimmed(data: Any, depth: int = 0) -> Any:
    """At most MAX_ERRORS entries per list or object and MAX_ERROR_TEXT characters per text."""
    if depth > 8:
        return "..."
    if isinstance(data, list):
        return [trimmed(item, depth + 1) for item in data[:MAX_ERRORS]]
    if isinstance(data, dict):
        items = list(data.items())[: max(MAX_ERRORS, 10) if depth == 0 else MAX_ERRORS]
        return {key: trimmed(value, depth + 1) for key, value in items}
    if isinstance(data, str) and len(data) > MAX_ERROR_TEXT:
        cut = data[:MAX_ERROR_TEXT] + "…"
        return ErrorDetail(cut, code=data.code) if isinstance(data, ErrorDetail) else cut
    return data
