"""The one error model of the domain: what went wrong (a kind), where (a field) and a code.

Services raise these; `config.api.exception_handler` turns them into HTTP in one place, so
every endpoint answers the same way: invalid 400, forbidden 403, not found 404, conflict 409,
unprocessable 422, unavailable 503 with Retry-After. Messages are translated when they are
raised (the request's language is active then), with placeholders filled after translation.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any


class ErrorKind(StrEnum):
    INVALID = "invalid"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    UNPROCESSABLE = "unprocessable"
    UNAVAILABLE = "unavailable"


class DomainError(Exception):
    """A request the domain refuses or cannot serve now; nothing has been written.

    `field` names the offending input (None: the request as a whole); `code` is a stable
    machine-readable word for clients (the kind's value unless a subclass is more precise).
    """

    kind: ErrorKind = ErrorKind.INVALID
    default_code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        code: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = str(message)
        self.field = field
        self.code = code or self.default_code or self.kind.value
        # More keys of the answer beside "detail", e.g. who holds a claimed notification.
        self.extra: dict[str, Any] = dict(extra or {})
        # The refusal of the same request made before, answered again from its
        # Idempotency-Key record (config/idempotency.py): the API says so in a header.
        self.replayed = False

    def __str__(self) -> str:
        return self.message


class Invalid(DomainError):
    """Bad input (400)."""

    kind = ErrorKind.INVALID


class Forbidden(DomainError):
    """Allowed to nobody in the caller's position (403)."""

    kind = ErrorKind.FORBIDDEN


class NotFound(DomainError):
    """No such thing, or not the caller's to see (404)."""

    kind = ErrorKind.NOT_FOUND


class Conflict(DomainError):
    """The state changed under the request; retrying may succeed (409)."""

    kind = ErrorKind.CONFLICT


class Unavailable(DomainError):
    """A dependency cannot serve the request right now (503 with Retry-After)."""

    kind = ErrorKind.UNAVAILABLE
