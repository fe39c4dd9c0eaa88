"""Fixtures for alert actions: a WMS webhook receiver on 127.0.0.1 over real HTTPS, with a CA
made for the run (as the push tests' service), subscribed operators, actions and a press."""

from __future__ import annotations

import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from actions.models import AlertAction
from notifications.services import publish
from subscriptions.models import Subscription
from tests.push.conftest import (  # noqa: F401  (the push service's fixtures, for reminders)
    _certificates,
    browser_at,
    push_service,
    subscribe,
)


@dataclass(frozen=True)
class Call:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)


class WebhookReceiver:
    """The WMS side: records every POST and answers 200 with a body, or the answers queued with
    `answer()`; `hold()` keeps answers back (the call stays open) until `release()`."""

    def __init__(self, folder: Path) -> None:
        self.ca, cert, key = _certificates(folder)
        self.calls: list[Call] = []
        self._answers: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._released.set()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.calls.append(
                        Call(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    number = len(receiver.calls)
                    status, text = (
                        receiver._answers.pop(0)
                        if receiver._answers
                        else (200, json.dumps({"task": f"RT-{number}"}))
                    )
                receiver._released.wait(30)
                data = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the caller is gone (a killed worker)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str = "/wms/replenishment") -> str:
        return f"https://{self.host}{path}"

    def answer(self, *answers: int | tuple[int, str]) -> None:
        with self._lock:
            for found in answers:
                self._answers.append(found if isinstance(found, tuple) else (found, "{}"))

    def hold(self) -> None:
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def stop(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(tmp_path, settings, monkeypatch) -> Iterator[WebhookReceiver]:
    """The receiver, trusted through REQUESTS_CA_BUNDLE, its host:port allowed for webhooks."""
    found = WebhookReceiver(tmp_path)
    settings.ALERT_WEBHOOK_ALLOWED_HOSTS = [found.host]
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(found.ca))
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture
def replenishers(db, warehouse, rep_notice, role, make_user):
    """Two users of the Replenishment role, which receives REP_NOTICE in SH01."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role), make_user("ralf", role)


@pytest.fixture
def send(warehouse, rep_notice):
    """Publish a REP_NOTICE into SH01 about bin A-01-03 (keywords override)."""

    def send_one(title: str = "Replenish A-01-03", **kwargs):
        kwargs.setdefault("message_type", rep_notice)
        kwargs.setdefault("warehouse", warehouse)
        kwargs.setdefault("data", {"bin": "A-01-03", "qty": -12})
        return publish(title=title, **kwargs)

    return send_one


@pytest.fixture
def make_action(rep_notice, receiver):
    def make(code: str = "task-created", **fields) -> AlertAction:
        fields.setdefault("message_type", rep_notice)
        fields.setdefault("label", "Replenishment task created")
        fields.setdefault("label_zh", "已创建补货任务")
        fields.setdefault("url", receiver.url())
        return AlertAction.objects.create(code=code, **fields)

    return make


@pytest.fixture
def press(client_for, warehouse):
    """press(user, notification id, code, scan=..., key=...) -> the API's response."""

    def make(user, notification_id: str, code: str, *, key: str | None = None, **body):
        headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
        return client_for(user).post(
            f"/api/v1/notifications/{notification_id}/actions/{code}/",
            {"warehouse": warehouse.pk, **body},
            format="json",
            **headers,
        )

    return make
