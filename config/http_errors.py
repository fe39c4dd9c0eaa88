"""The HTTP side of the error model: DRF exceptions for what DRF has none of, and limits.

Kept apart from config.api (the handler) so that parsers and fields can raise these without
importing DRF's views, which load the parser classes from settings.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import exceptions, status

REDIS_DOWN_DETAIL = gettext_lazy(
    "The message store is unavailable right now; please retry shortly."
)
# An error answer lists at most this many errors per list or object, and cuts longer texts:
# a request with 300,000 bad items must not get a 12 MB answer.
MAX_ERRORS = 5
MAX_ERROR_TEXT = 500


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = gettext_lazy("The request conflicts with the current state; retry.")
    default_code = "conflict"


class Unprocessable(exceptions.APIException):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_detail = gettext_lazy("The request cannot be processed as sent.")
    default_code = "unprocessable"


class Unavailable(exceptions.APIException):
    """503 with Retry-After (DRF's handler turns `wait` into the header)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = REDIS_DOWN_DETAIL
    default_code = "unavailable"

    def __init__(self, detail: Any = None, code: str | None = None) -> None:
        super().__init__(detail, code)
        self.wait = settings.REDIS_RETRY_AFTER_SECONDS


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"

    def __init__(self) -> None:
        super().__init__(
            _("The request body is larger than the limit of %(limit)d bytes.")
            % {"limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}
        )
