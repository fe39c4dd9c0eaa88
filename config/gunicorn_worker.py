"""gunicorn's sync worker, answering in JSON the requests gunicorn itself refuses (SPEC 10).

gunicorn refuses some requests before Django sees them (a request line over
`--limit-request-line`: 414; a header value with a byte HTTP forbids, such as DEL: 400; too
many or too large headers: 431) and answers them with a small HTML page of its own. This
worker lets gunicorn decide the status and log the request as it always does, then sends the
API's error shape instead: `{"detail": "..."}`. Procfile.production names it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gunicorn import util
from gunicorn.workers.sync import SyncWorker

# What gunicorn's own answer starts with (gunicorn.util.write_error).
STATUS_LINE = re.compile(rb"HTTP/1\.[01] (\d{3}) ([^\r\n]*)\r\n")
DETAILS = {
    400: "Bad request.",
    403: "Forbidden.",
    414: "The request line is too long.",
    417: "The expectation cannot be met.",
    431: "The request headers are too large.",
    500: "Server error.",
    501: "The request's transfer coding is not supported.",
}


class Recorder:
    """Stands in for the client's socket while gunicorn writes its error page."""

    def __init__(self) -> None:
        self.written = b""

    def gettimeout(self) -> float:
        return 0.0  # gunicorn then writes at once, with sendall

    def sendall(self, data: bytes) -> None:
        self.written += data


def json_answer(gunicorn_answer: bytes) -> bytes:
    """The same status as gunicorn's answer, with a JSON body; gunicorn's answer unchanged if
    it is not the page this module knows."""
    match = STATUS_LINE.match(gunicorn_answer)
    if match is None:
        return gunicorn_answer
    status, reason = int(match.group(1)), match.group(2).decode("latin-1")
    detail = DETAILS.get(status, f"{reason}.")
    body = json.dumps({"detail": detail}, separators=(",", ":")).encode()  # as the API writes it
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("latin-1") + body


class JsonErrorSyncWorker(SyncWorker):
    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        recorder = Recorder()
        super().handle_error(req, recorder, addr, exc)
        try:
            util.write_nonblock(client, json_answer(recorder.written))
        except Exception:
            self.log.debug("Failed to send error message.")
