"""An HTTPS server on 127.0.0.1 standing in for what the product posts to (push services, a
WMS's webhooks): a real TLS server with a certificate from a CA made for the test (the demo's
maker, demo/tls.py), which the product trusts only through REQUESTS_CA_BUNDLE, as a deployment
with its own service would.

A subclass says how it answers: `pick()` (under the lock, as the request is recorded) chooses
the answer, `send()` writes it. `hold()` keeps answers back (a `send()` that calls
`wait_for_release()` waits) until `release()`.
"""

from __future__ import annotations

import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from demo import tls


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)


class HTTPSStandIn:
    def __init__(self, folder: Path) -> None:
        self.ca, cert, key = tls.certificates(folder, days=1)
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._released.set()
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with stand_in._lock:
                    stand_in.received.append(request)
                    answer = stand_in.pick(request)
                stand_in.send(self, answer)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def pick(self, request: Received) -> Any:
        """The answer to this request (called under the lock, once it is recorded)."""
        raise NotImplementedError

    def send(self, handler: http.server.BaseHTTPRequestHandler, answer: Any) -> None:
        """Write the answer `pick` chose."""
        raise NotImplementedError

    def wait_for_release(self) -> None:
        self._released.wait(30)

    def hold(self) -> None:
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def stop(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


S = TypeVar("S", bound=HTTPSStandIn)


@contextmanager
def trusted(
    stand_in: S, settings: Any, monkeypatch: pytest.MonkeyPatch, *, allowed_hosts: str
) -> Iterator[S]:
    """The stand-in, trusted through REQUESTS_CA_BUNDLE, its host:port in the setting named
    `allowed_hosts`; stopped at the end."""
    setattr(settings, allowed_hosts, [stand_in.host])
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(stand_in.ca))
    try:
        yield stand_in
    finally:
        stand_in.stop()
