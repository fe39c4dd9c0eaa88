"""The outbox's handler of alert actions' webhooks (SPEC 14): `send` posts a run to its
action's webhook, `settle` records the outcome once (`action_succeeded` / `action_failed` in
the history, the run's status, and a resolving action's resolve), `reopen` makes a failed run
pending again when an operator retries it."""

from __future__ import annotations

import hashlib
import hmac
import json

import requests
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from config import idempotency, timestamps
from config.idempotency import Guard
from config.users import User
from notifications import keys as notification_keys
from notifications import lifecycle
from notifications.domain import Event
from outbound.http import OutboundSession
from outbox.handlers import Delivery, Outcome
from outbox.models import OutboxMessage
from outbox.models import Status as MessageStatus

from .models import ActionRun, RunStatus, check_webhook_url

# The outbox message kind of a run's webhook (actions/apps.py registers the handler).
WEBHOOK = "webhook"


def signature(secret: str, body: bytes) -> str:
    """X-WMS-Signature: `sha256=` and the hex HMAC-SHA256 of the body with the secret."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Webhooks:
    """Posts a run to its action's webhook. `session` is a class attribute so tests and the
    benchmark can give it another one."""

    session: requests.Session | None = None

    @classmethod
    def send(cls, message: OutboxMessage) -> Delivery:
        run = ActionRun.objects.select_related("action").filter(pk=message.pk).first()
        if run is None:
            return Delivery(Outcome.FAILED, error="the run was deleted")
        action = run.action
        if not action.is_active:  # switched off after the press: the WMS is not called
            return Delivery(
                Outcome.FAILED,
                result=f"cancelled: the action {action.code!r} is no longer active",
                error="cancelled: the action is no longer active",
            )
        try:
            check_webhook_url(action.url)  # again before every call: the list may have changed
        except ValidationError as exc:
            return Delivery(Outcome.FAILED, error=f"refused: {' '.join(exc.messages)}")
        body = json.dumps(message.payload["body"], ensure_ascii=False, separators=(",", ":"))
        data = body.encode()
        session = cls.session or OutboundSession()
        try:
            response = session.post(
                action.url,
                data=data,
                headers={
                    "Content-Type": "application/json",
                    "Idempotency-Key": str(message.pk),
                    "X-WMS-Signature": signature(action.secret, data),
                },
                timeout=settings.ALERT_WEBHOOK_TIMEOUT_SECONDS,
            )
        except requests.RequestException as exc:
            return Delivery(Outcome.RETRY, error=f"{type(exc).__name__}: {exc}"[:500])
        text = response.text[: settings.OUTBOX_RESULT_MAX_CHARS]
        status = response.status_code
        if 200 <= status < 300:
            return Delivery(Outcome.SUCCEEDED, result=text)
        if status >= 500:
            return Delivery(Outcome.RETRY, result=text, error=f"HTTP {status}")
        return Delivery(Outcome.FAILED, result=text, error=f"HTTP {status}")

    @classmethod
    def settle(cls, message: OutboxMessage) -> None:
        """Record the run's outcome once: history (under a record of this message, attempt
        and outcome, so a second settle records nothing), a resolving action's resolve (itself
        idempotent), then the run's row."""
        run = ActionRun.objects.select_related("action").filter(pk=message.pk).first()
        if run is None:
            return
        succeeded = message.status == MessageStatus.SUCCEEDED
        record = f"outbox:{message.pk}:{message.attempts}:{message.status}"
        guard = Guard(
            record=notification_keys.idempotency(run.warehouse_id, "python", record),
            fingerprint=idempotency.fingerprint(scope="python", operation="settle", request=record),
        )
        lifecycle.record_event(
            warehouse_id=run.warehouse_id,
            notification_id=run.notification_id,
            event=Event.ACTION_SUCCEEDED if succeeded else Event.ACTION_FAILED,
            by=None,
            extra={"code": run.action.code, "run": str(run.pk)},
            guard=guard,
        )
        if succeeded and run.action.resolves:
            _resolve_for(run)
        ActionRun.objects.filter(pk=run.pk).update(
            status=RunStatus.SUCCEEDED if succeeded else RunStatus.FAILED,
            result=message.result if succeeded else (message.result or message.last_error),
            finished_at=message.finished_at or timestamps.now(),
            # Kept on the run: the outbox deletes its row after OUTBOX_RETENTION_DAYS.
            attempts=message.attempts,
        )

    @classmethod
    def reopen(cls, message: OutboxMessage) -> bool:
        """An operator retries a failed run: pending again, unless a newer run of the action
        on the alert is pending or succeeded (then False: that one stands)."""
        try:
            with transaction.atomic():
                ActionRun.objects.filter(pk=message.pk, status=RunStatus.FAILED).update(
                    status=RunStatus.PENDING, result="", finished_at=None
                )
        except IntegrityError:
            return False
        return True


def _resolve_for(run: ActionRun) -> None:
    """Resolve the alert by the one who pressed (SPEC 14); by the system if they can no longer
    see it. Resolving twice changes nothing."""
    presser = User.objects.filter(pk=run.user_id, is_active=True).first() if run.user_id else None
    if presser is not None:
        try:
            lifecycle.resolve(
                user=presser, warehouse_id=run.warehouse_id, notification_id=run.notification_id
            )
            return
        except lifecycle.NotVisible:
            pass
    lifecycle.resolve_by_system(warehouse_id=run.warehouse_id, notification_id=run.notification_id)
