"""Fixtures for alert actions: a WMS webhook receiver on 127.0.0.1 over real HTTPS (the shared
stand-in of tests/https_stand_in.py, as the push tests' service), subscribed operators, actions
and a press."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from actions.models import AlertAction
from notifications.services import publish
from subscriptions.models import Subscription
from tests.https_stand_in import HTTPSStandIn, Received, trusted
from tests.push.conftest import (  # noqa: F401  (the push service's fixtures, for reminders)
    browser_at,
    push_service,
    subscribe,
)


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
