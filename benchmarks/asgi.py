"""ASGI application of the benchmark's server: the product's (stream included) with the floor
endpoint added, and row 16's baseline: a minimal SSE endpoint at /bench/sse/ (no
authentication, no Redis: headers, one `ready` event, then open until the client leaves)."""

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

from config.asgi import application as product


async def minimal_sse(receive: Any, send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
        }
    )
    await send(
        {"type": "http.response.body", "body": b"event: ready\ndata: {}\n\n", "more_body": True}
    )
    while (await receive())["type"] != "http.disconnect":
        pass


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope.get("path") == "/bench/sse/":
        await minimal_sse(receive, send)
        return
    await product(scope, receive, send)
