"""ASGI entry point: `uvicorn config.asgi:application`.

Everything goes to Django except the event stream, which goes to its own small ASGI app
(stream/app.py): Django runs synchronous middleware in a thread per request even for an async
view, and a stream stays open for hours, so it must not pass through Django's handler.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

django_application = get_asgi_application()  # sets Django up before the imports below

from stream.app import StreamApp  # noqa: E402

STREAM_PATH = "/api/v1/stream/"

stream_application = StreamApp()


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    path = scope.get("path", "")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    if scope["type"] == "http" and path in (STREAM_PATH, STREAM_PATH.rstrip("/")):
        await stream_application(scope, receive, send)
        return
    await django_application(scope, receive, send)


async def _lifespan(receive: Any, send: Any) -> None:
    # Django's handler does not speak the lifespan protocol; the stream needs the shutdown
    # message to end its streams so the server can stop.
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await stream_application.hub.aclose()
            await stream_application.streams.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
