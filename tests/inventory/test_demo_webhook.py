"""The demo WMS's side of the alert action "Replenishment task created" (SPEC 14): a signed call
makes one replenishment task per run, however often it comes; an unsigned one is refused."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid

import pytest

from actions.models import AlertAction
from demo.data import DEMO_WEBHOOK_PATH
from inventory.models import ReplenishmentTask

pytestmark = pytest.mark.django_db


def call(client, secret: str, run: str, body: dict, signature: str | None = None):
    data = json.dumps(body).encode()
    sign = signature or "sha256=" + hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()
    return client.post(
        DEMO_WEBHOOK_PATH,
        data=data,
        content_type="application/json",
        HTTP_X_WMS_SIGNATURE=sign,
        HTTP_IDEMPOTENCY_KEY=run,
    )


def test_one_task_per_run(client, rep_notice, warehouse):
    action = AlertAction.objects.create(
        message_type=rep_notice, code="task-created", label="Task", url="https://wms.example/x"
    )
    run = str(uuid.uuid4())
    body = {
        "run": run,
        "action": "task-created",
        "notification": {
            "id": "n-1",
            "warehouse": warehouse.pk,
            "data": {"bin": "A-01-03", "qty": -12},
        },
        "by": {"id": 1, "username": "alice"},
        "scan": "A-01-03",
    }

    first = call(client, action.secret, run, body)
    again = call(client, action.secret, run, body)

    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    task = ReplenishmentTask.objects.get()
    assert (task.bin_code, task.quantity, task.requested_by) == ("A-01-03", 12, "alice")
    assert call(client, action.secret, str(uuid.uuid4()), body, "sha256=00").status_code == 401
    assert ReplenishmentTask.objects.count() == 1
