"""The worker Procfile.production runs gunicorn with (config/gunicorn_worker.py): gunicorn's
own refusals keep their status and get the API's JSON body. (tests/test_behind_proxy.py sends
the requests themselves through nginx.)"""

from __future__ import annotations

import json

import pytest
from gunicorn import util

from config.gunicorn_worker import Recorder, json_answer


def gunicorn_page(status: int, reason: str, message: str) -> bytes:
    """What gunicorn itself writes for a request it refuses."""
    recorder = Recorder()
    util.write_error(recorder, status, reason, message)
    return recorder.written


@pytest.mark.parametrize(
    ("status", "reason", "detail"),
    [
        (400, "Bad Request", "Bad request."),
        (414, "URI Too Long", "The request line is too long."),
        (431, "Request Header Fields Too Large", "The request headers are too large."),
        (418, "I'm a teapot", "I'm a teapot."),
    ],
)
def test_gunicorns_page_becomes_json_with_the_same_status(status, reason, detail):
    page = gunicorn_page(status, reason, "Invalid HTTP Header: 'IDEMPOTENCY-KEY'")
    assert b"<html>" in page

    head, _, body = json_answer(page).partition(b"\r\n\r\n")

    lines = head.decode("latin-1").split("\r\n")
    assert lines[0] == f"HTTP/1.1 {status} {reason}"
    assert "Content-Type: application/json" in lines
    assert f"Content-Length: {len(body)}" in lines
    assert json.loads(body) == {"detail": detail}  # nothing of what the client sent


def test_an_answer_it_does_not_know_is_sent_as_gunicorn_wrote_it():
    assert json_answer(b"something else") == b"something else"
