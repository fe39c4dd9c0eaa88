"""config.asgi:application under a real uvicorn server in a thread of the test process.

Like Django's live_server it shares the process's settings, test database and Redis; unlike
it, it serves the event stream (which needs ASGI).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from devredis.embedded_redis import free_port


@contextmanager
def running(application: Any = "config.asgi:application", name: str = "uvicorn") -> Iterator[str]:
    """Start the server on `application` (an ASGI callable, or its import path) in a thread
    called `name`; yields its base URL; stops it afterwards."""
    server = uvicorn.Server(
        uvicorn.Config(
            application,
            host="127.0.0.1",
            port=free_port(),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
    )
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
