"""The OpenAPI schema documents the error answers every operation can give (SPEC section 3).

drf-spectacular describes success only; clients (and the fuzz run in tests/test_fuzz.py) need
to know that a 400, 401, 403, 404, 413, 429 or 503 is part of the contract, and its shape.
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
    "401": "Not authenticated.",
    "403": "Not allowed (or the CSRF header is missing under a session).",
    "429": "Throttled; see Retry-After.",
    "503": "Redis is unavailable or failing; retry after Retry-After seconds.",
}
WITH_PATH_PARAMETERS = {"404": "No such object, or not yours."}
WITH_BODY = {
    "413": "The body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE.",
    "415": "Unsupported content type.",
}
METHODS = ("get", "put", "post", "patch", "delete")


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
            if "requestBody" in operation:
                errors |= WITH_BODY
            responses = operation.setdefault("responses", {})
            media_types = _success_media_types(responses)
            for status, description in errors.items():
                responses.setdefault(status, _response(status, description, media_types))
    return result


def _success_media_types(responses: dict[str, Any]) -> list[str]:
    """Errors come in the media types successes do (JSON, and XML where it is offered)."""
    for status, response in sorted(responses.items()):
        if status.startswith("2") and response.get("content"):
            return list(response["content"])
    return ["application/json"]


def _response(status: str, description: str, media_types: list[str]) -> dict[str, Any]:
    reference = {"schema": {"$ref": f"#/components/schemas/{ERROR}"}}
    content = {media_type: reference for media_type in media_types}
    response: dict[str, Any] = {"description": description, "content": content}
    if status in ("429", "503"):
        response["headers"] = RETRY_AFTER
    return response
