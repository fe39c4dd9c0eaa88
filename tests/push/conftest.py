"""Fixtures for Web Push tests: browsers' key pairs, and a push service stand-in on 127.0.0.1.

The stand-in is tests/https_stand_in.py's HTTPS server; the product trusts it only through
REQUESTS_CA_BUNDLE (and WEB_PUSH_ALLOWED_HOSTS lets it post there), as a deployment with its
own push service would.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import http_ece
import pytest
from celery.contrib.testing.worker import start_worker
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from config.celery import app
from notifications.services import publish
from push.keys import b64url
from push.models import PushSubscription
from subscriptions.models import Subscription, Warehouse
from tests.https_stand_in import HTTPSStandIn, Received, trusted


@dataclass
class Browser:
    """What a browser keeps of its push subscription: the private half of p256dh, and auth."""

    endpoint: str
    private_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth_secret: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def keys(self) -> dict[str, str]:
        public = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"p256dh": b64url(public), "auth": b64url(self.auth_secret)}

    def subscription_json(self, *warehouses: Warehouse) -> dict:
        """What the page posts: the browser's PushSubscription JSON and the warehouses."""
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": self.keys,
            "warehouses": [w.pk for w in warehouses],
        }

    def decrypt(self, body: bytes) -> dict:
        """The push's plain JSON, decrypted as the browser would (RFC 8291, aes128gcm)."""
        plain = http_ece.decrypt(
            body, private_key=self.private_key, auth_secret=self.auth_secret, version="aes128gcm"
        )
        return json.loads(plain)


@dataclass
class Misbehaviour:
    """What the stand-in got to send of a misbehaving answer (`trickle()`, `flood()`)."""

    size: int  # bytes of the whole answer, status line and headers included
    sent: int = 0
    hung_up: bool = False  # the client closed the connection before the whole answer was sent
    done: threading.Event = field(default_factory=threading.Event)

    def send(self, handler: http.server.BaseHTTPRequestHandler, chunks: Iterable[bytes]) -> None:
        handler.close_connection = True
        try:
            for chunk in chunks:
                handler.wfile.write(chunk)
                self.sent += len(chunk)
        except OSError:  # a broken pipe or a reset, over TLS or not
            self.hung_up = True
        finally:
            self.done.set()


class PushServiceStandIn(HTTPSStandIn):
    """An HTTPS push service on 127.0.0.1: records every request and answers 201, or the
    statuses queued for a path with `answer()`; `hold()` keeps answers back until `release()`;
    `trickle()` and `flood()` make a path's answers slow or huge."""

    def __init__(self, folder: Path) -> None:
        self._answers: dict[str, list[tuple[int, dict[str, str]]]] = {}
        self._misbehaving: dict[str, tuple[Misbehaviour, Iterable[bytes]]] = {}
        self.waiting = 0
        super().__init__(folder)

    def pick(self, request: Received) -> tuple:
        misbehaving = self._misbehaving.pop(request.path, None)
        queued = self._answers.get(request.path) or []
        status, headers = queued.pop(0) if queued else (201, {})
        self.waiting += 1
        return misbehaving, status, headers

    def send(self, handler: http.server.BaseHTTPRequestHandler, answer: tuple) -> None:
        misbehaving, status, headers = answer
        if misbehaving is not None:
            record, chunks = misbehaving
            record.send(handler, chunks)
            with self._lock:
                self.waiting -= 1
            return
        self.wait_for_release()
        with self._lock:
            self.waiting -= 1
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def endpoint(self, name: str) -> str:
        return f"https://{self.host}/push/{name}"

    def answer(self, name: str, *statuses: int, headers: dict[str, str] | None = None) -> None:
        """The next answers to pushes to endpoint `name` (then 201 again)."""
        with self._lock:
            self._answers.setdefault(f"/push/{name}", []).extend(
                (status, headers or {}) for status in statuses
            )

    def trickle(
        self, name: str, *, every: float, status_at_once: bool = False, body: int = 40
    ) -> Misbehaviour:
        """The next push to `name` is answered 201 one byte every `every` seconds (from the
        first byte of the status line, or once status and headers are sent at once)."""
        head = f"HTTP/1.1 201 Created\r\nContent-Length: {body}\r\n\r\n".encode()
        answer = head + b"x" * body

        def chunks() -> Iterator[bytes]:
            start = len(head) if status_at_once else 0
            if start:
                yield head
            for index in range(start, len(answer)):
                time.sleep(every)
                yield answer[index : index + 1]

        return self._misbehave(name, len(answer), chunks())

    def flood(self, name: str, *, status: int, size: int) -> Misbehaviour:
        """The next push to `name` is answered `status` with a body of `size` bytes, sent as
        fast as the client takes it."""
        head = f"HTTP/1.1 {status} Whatever\r\nContent-Length: {size}\r\n\r\n".encode()
        block = b"x" * 65536

        def chunks() -> Iterator[bytes]:
            yield head
            for offset in range(0, size, len(block)):
                yield block[: min(len(block), size - offset)]

        return self._misbehave(name, len(head) + size, chunks())

    def _misbehave(self, name: str, size: int, chunks: Iterable[bytes]) -> Misbehaviour:
        record = Misbehaviour(size=size)
        with self._lock:
            self._misbehaving[f"/push/{name}"] = (record, chunks)
        return record

    def to(self, name: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path == f"/push/{name}"]


@pytest.fixture
def push_service(tmp_path, settings, monkeypatch) -> Iterator[PushServiceStandIn]:
    """The stand-in, trusted through REQUESTS_CA_BUNDLE and allowed by WEB_PUSH_ALLOWED_HOSTS."""
    stand_in = PushServiceStandIn(tmp_path)
    with trusted(stand_in, settings, monkeypatch, allowed_hosts="WEB_PUSH_ALLOWED_HOSTS"):
        yield stand_in


@pytest.fixture
def browser_at(push_service):
    """browser_at("rita-phone") -> a Browser whose endpoint is on the stand-in."""

    def make(name: str) -> Browser:
        return Browser(endpoint=push_service.endpoint(name))

    return make


@pytest.fixture
def subscribe():
    """subscribe(user, browser, *warehouses): store the browser's subscription for the user."""
    from push import services

    def make(user, browser: Browser, *warehouses: Warehouse) -> PushSubscription:
        subscription, _ = services.subscription_save(
            user=user, endpoint=browser.endpoint, warehouses=list(warehouses), **browser.keys
        )
        return subscription

    return make


@pytest.fixture
def crew(db, warehouse, rep_notice, role, make_user):
    """rita and ralf (Replenishment, which receives REP_NOTICE in SH01) and olga (nothing)."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role), make_user("ralf", role), make_user("olga")


@pytest.fixture
def on_their_phones(crew, warehouse, browser_at, subscribe, settings):
    """Rita and Ralf (the crew's first two), each with a phone subscribed in SH01, pushed
    warnings and up: (rita, ralf)."""
    settings.WEB_PUSH_MIN_SEVERITY = "warning"
    rita, ralf = crew[:2]
    subscribe(rita, browser_at("rita-phone"), warehouse)
    subscribe(ralf, browser_at("ralf-phone"), warehouse)
    return rita, ralf


@pytest.fixture
def send(warehouse, rep_notice):
    """send(**publish arguments): a critical REP_NOTICE in SH01, unless told otherwise."""

    def send_one(**kwargs):
        kwargs.setdefault("title", "Stock-out at A-01-03")
        kwargs.setdefault("body", "Stock is -12 after wave 8812")
        kwargs.setdefault("severity", "critical")
        return publish(message_type=rep_notice, warehouse=warehouse, ttl_seconds=600, **kwargs)

    return send_one


@contextmanager
def push_worker() -> Iterator[None]:
    """A real Celery worker (in a thread) that, as `push_worker` in the Procfile, consumes
    only the push queue."""
    # The worker selects its queues on the app, where every later worker of this test process
    # would find them: they are put back afterwards.
    before = list(app.amqp.queues.consume_from)
    try:
        with start_worker(
            app, pool="solo", queues=["push"], perform_ping_check=False, shutdown_timeout=10
        ):
            yield
    finally:
        app.amqp.queues.select(before)
