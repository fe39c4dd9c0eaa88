"""The OpenAPI schema documents the error answers every operation can give (SPEC section 3).

drf-spectacular describes success only; clients (and the fuzz run in tests/test_fuzz.py) need
to know that a 400, 403, 404, 413, 429 or 503 is part of the contract, and its shape. No API
operation answers 401: session authentication comes first, and DRF then answers a missing or
wrong token with 403. tests/test_schema_errors.py triggers each documented error of the
floor's operations and validates the answer against this schema.
"""

from __future__ import annotations

from typing import Any

ERROR = "Error"
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        '`{"detail": "..."}`, or for invalid input one key per offending field with a list of '
        "messages (the first few only)."
    ),
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer"},
    }
}
ALWAYS = {
    "400": "Invalid input.",
    "403": (
        "Not signed in (no session, a missing or wrong token), not allowed, or the CSRF header "
        "is missing under a session."
    ),
    "429": "Throttled; see Retry-After.",
    "503": "Redis is unavailable or failing; retry after Retry-After seconds.",
}
WITH_PATH_PARAMETERS = {"404": "No such object, or not yours."}
# A body too large is refused before any view reads it, whatever the operation takes.
MAY_SEND_A_BODY = ("post", "put", "patch")
TOO_LARGE = {"413": "The body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE."}
WITH_BODY = {"415": "Unsupported content type."}
METHODS = ("get", "put", "post", "patch", "delete")
# Media types whose errors are the Error object; in any other (the roster's text/csv) an error
# is its detail as one line of text.
STRUCTURED = ("application/json", "application/xml")
TEXT_ERROR: dict[str, Any] = {
    "type": "string",
    "description": "The error's detail, as one line of text.",
}


def document_errors(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular postprocessing hook: add the error answers to every operation."""
    result.setdefault("components", {}).setdefault("schemas", {})[ERROR] = ERROR_SCHEMA
    for path, item in result.get("paths", {}).items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            errors = dict(ALWAYS)
            parameters = {p.get("name") for p in operation.get("parameters", [])}
            # DRF answers an unknown ?format= with 404 too.
            if "{" in path or "format" in parameters:
                errors |= WITH_PATH_PARAMETERS
            if method in MAY_SEND_A_BODY:
                errors |= TOO_LARGE
            if "requestBody" in operation:
                errors |= WITH_BODY
            responses = operation.setdefault("responses", {})
            media_types = _success_media_types(responses)
            for status, description in errors.items():
                responses.setdefault(status, _response(status, description, media_types))
            for status, response in responses.items():
                if status[0] in "45" and not response.get("content"):
                    # An error declared by its description alone still has the JSON body.
                    response["content"] = _response(status, "", ["application/json"])["content"]
    return result


def _success_media_types(responses: dict[str, Any]) -> list[str]:
    """Errors come in the media types successes do (JSON, and XML where it is offered)."""
    for status, response in sorted(responses.items()):
        if status.startswith("2") and response.get("content"):
            return list(response["content"])
    return ["application/json"]


def _response(status: str, description: str, media_types: list[str]) -> dict[str, Any]:
    reference = {"schema": {"$ref": f"#/components/schemas/{ERROR}"}}
    content = {
        media_type: reference if media_type in STRUCTURED else {"schema": TEXT_ERROR}
        for media_type in media_types
    }
    response: dict[str, Any] = {"description": description, "content": content}
    if status in ("429", "503"):
        response["headers"] = RETRY_AFTER
    return response
