"""The demo's WMS side of an alert action (SPEC 14): the webhook "Replenishment task created"
calls. It checks the signature with the action's secret, makes one replenishment task per run
(the Idempotency-Key), and answers with the task, which the run shows as its result.

A real WMS keeps the secret it was given; this stand-in runs in the same project, so it reads
it from the action's row.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from actions.models import AlertAction

from .models import ReplenishmentTask

ACTION_CODE = "task-created"


@csrf_exempt  # a server-to-server call, authenticated by its signature
@require_POST
def replenishment_task(request: HttpRequest) -> HttpResponse:
    sent = request.headers.get("X-WMS-Signature", "")
    secrets = AlertAction.objects.filter(code=ACTION_CODE).values_list("secret", flat=True)
    if not any(
        hmac.compare_digest(
            sent, "sha256=" + hmac.new(s.encode(), request.body, hashlib.sha256).hexdigest()
        )
        for s in secrets
    ):
        return JsonResponse({"error": "bad signature"}, status=401)
    run = request.headers.get("Idempotency-Key", "")
    try:
        body = json.loads(request.body)
        note = body["notification"]
        data = note.get("data") or {}
        task = ReplenishmentTask(
            run_id=run,
            warehouse_id=int(note["warehouse"]),
            bin_code=str(data.get("bin", "")),
            quantity=max(0, -int(data.get("qty") or 0)),
            notification_id=str(note["id"]),
            requested_by=str(body["by"]["username"]),
        )
        with transaction.atomic():
            task.save()
    except IntegrityError:
        task = ReplenishmentTask.objects.get(run_id=run)  # a retry: the same task, once
    except (ValueError, KeyError, TypeError):
        return JsonResponse({"error": "not an alert action call"}, status=400)
    return JsonResponse({"task": f"RT-{task.pk}", "bin": task.bin_code, "quantity": task.quantity})
