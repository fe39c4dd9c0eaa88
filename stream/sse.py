"""Server-Sent Events framing (https://html.spec.whatwg.org/#server-sent-events)."""

from __future__ import annotations

KEEP_ALIVE = b": keep-alive\n\n"


def frame(*, event: str, data: bytes, id: int | None = None) -> bytes:
    """One event. `data` is one line of JSON (JSON never holds a raw line break)."""
    head = b"event: " + event.encode() + b"\n"
    if id is not None:
        # The browser sends the last id back as Last-Event-ID when it reconnects; events
        # without one (chat) leave it unchanged.
        head += b"id: " + str(int(id)).encode() + b"\n"
    return head + b"data: " + data + b"\n\n"


def retry(milliseconds: int) -> bytes:
    """How long a browser waits before reconnecting after the stream ends."""
    return b"retry: " + str(int(milliseconds)).encode() + b"\n\n"
