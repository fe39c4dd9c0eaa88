"""Fixtures for alert actions: a WMS webhook receiver on 127.0.0.1 over real HTTPS (the shared
stand-in of tests/https_stand_in.py, as the push tests' service), subscribed operators, actions
and a press; and the test database shared with a real Celery worker process (tests/workers.py)
that sends the runs."""

from __future__ import annotations

import http.server
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connections

from actions.models import AlertAction
from notifications.services import publish
from tests.https_stand_in import HTTPSStandIn, Received, trusted
from tests.push.conftest import (  # noqa: F401  (the push service's fixtures, for reminders)
    browser_at,
    push_service,
    subscribe,
)
from tests.workers import _inherited

# What a worker that sends runs consumes: the default queue and the outbox's.
QUEUES = ["celery", django_settings.OUTBOX_QUEUE]


@pytest.fixture
def shared_database(transactional_db, tmp_path) -> Iterator[None]:
    """The test database in a file for this test: a worker process forked from the test sees
    what the test wrote, and the test what the worker writes (an in-memory database would be
    copied at the fork, its writes lost with it). Restored afterwards. The live server's
    thread shares the test's connection, so it follows to the file too."""
    conn = connections["default"]
    if conn.vendor != "sqlite":
        yield  # PostgreSQL: the worker reaches the same database over its own connection
        return
    conn.ensure_connection()
    memory = conn.connection
    path = tmp_path / "db.sqlite3"
    target = sqlite3.connect(path)
    memory.backup(target)
    target.close()
    saved = conn.settings_dict["NAME"]
    conn.connection = None
    conn.settings_dict["NAME"] = str(path)
    # Django never closes an in-memory database's connection (the live server's threads share
    # it); one to a file is closed at the end of each request: keep this one open as well,
    # or a request's end closes it under another thread's query.
    conn.close = lambda: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        del conn.close
        conn.close()
        conn.settings_dict["NAME"] = saved
        conn.connection = memory


def fresh_connections() -> None:
    """In the worker: never use a SQLite connection opened before the fork."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None:
            _inherited.append(conn.connection)
            conn.connection = None


class WebhookReceiver(HTTPSStandIn):
    """The WMS side: records every POST and answers 200 with a body, or the answers queued with
    `answer()`; `hold()` keeps answers back (the call stays open) until `release()`."""

    def __init__(self, folder: Path) -> None:
        self._answers: list[tuple[int, str]] = []
        super().__init__(folder)

    @property
    def calls(self) -> list[Received]:
        return self.received

    def pick(self, request: Received) -> tuple[int, str]:
        if self._answers:
            return self._answers.pop(0)
        return 200, json.dumps({"task": f"RT-{len(self.received)}"})

    def send(self, handler: http.server.BaseHTTPRequestHandler, answer: tuple[int, str]) -> None:
        status, text = answer
        self.wait_for_release()
        data = text.encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:
            pass  # the caller is gone (a killed worker)

    def url(self, path: str = "/wms/replenishment") -> str:
        return f"https://{self.host}{path}"

    def answer(self, *answers: int | tuple[int, str]) -> None:
        with self._lock:
            for found in answers:
                self._answers.append(found if isinstance(found, tuple) else (found, "{}"))


@pytest.fixture
def receiver(tmp_path, settings, monkeypatch) -> Iterator[WebhookReceiver]:
    """The receiver, trusted through REQUESTS_CA_BUNDLE, its host:port allowed for webhooks."""
    found = WebhookReceiver(tmp_path)
    with trusted(found, settings, monkeypatch, allowed_hosts="ALERT_WEBHOOK_ALLOWED_HOSTS"):
        yield found


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
