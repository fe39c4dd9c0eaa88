"""Writes of alert actions (SPEC 14): pressing one, and sending its run to the WMS.

A press is decided on the alert in Redis (visible, of a type that has the action, not
resolved, not someone else's, the scan matching; claimed for the presser when open): one
script call that reads and claims (`lifecycle.claim_to_act`) when the action has nothing to
check against the alert's data, else a read, the scan's check, then the claim. Then one
database transaction writes the run and its outbox message (a Redis failure before it leaves
no run). After the commit, the history's `action` event (once per run) and the outbox's task
are recorded and queued; should either fail, the press's retry (by its Idempotency-Key, or
as the action's live run) records `action`, and beat's next pass sends the message. The task
posts the webhook (`Webhooks.send`), and `settle` records the outcome once:
`action_succeeded` / `action_failed` in the history, the run's status, and a resolving
action's resolve.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import re
import uuid
from dataclasses import dataclass
from enum import StrEnum
from http import HTTPStatus
from typing import Any

import requests
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext, ngettext

from config import errors, idempotency, timestamps
from config.idempotency import Guard
from config.timestamps import iso
from config.users import User
from notifications import keys as notification_keys
from notifications import lifecycle
from notifications.api.serializers import notification_dict
from notifications.domain import Actor, Event, InboxItem, Status
from outbound.http import OutboundSession
from outbox import services as outbox
from outbox.handlers import Delivery, Outcome
from outbox.models import OutboxMessage
from outbox.models import Status as MessageStatus

from . import catalog
from .models import ActionRun, RunStatus, check_webhook_url

logger = logging.getLogger(__name__)

WEBHOOK = "webhook"
LIVE = (RunStatus.PENDING, RunStatus.SUCCEEDED)


class NoSuchAction(errors.NotFound):
    """No active action with that code on the alert's message type."""

    default_code = "no_such_action"


class ScanMismatch(errors.Conflict):
    """What was scanned is not the alert's value of the action's confirm_field (409)."""

    default_code = "scan_mismatch"

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message, extra={"field": field})


@dataclass(frozen=True)
class Pressed:
    """What a press answers: the run, and whether this press started it (202) or an earlier
    pending or succeeded run of the action on the alert answered (200). `replayed`: the
    Idempotency-Key's first answer, given again as it was."""

    run: ActionRun | None
    created: bool
    replayed: dict[str, Any] | None = None


def _normal(text: object) -> str:
    return str(text).strip().casefold()


def press(
    *,
    user: User,
    warehouse_id: int,
    notification_id: str,
    code: str,
    scan: str | None = None,
    idempotency_key: str | None = None,
) -> Pressed:
    """Run the action `code` on the alert for the user, once (see the module docstring).

    Raises NotVisible (404) when the user cannot see it, NoSuchAction (404), AlreadyResolved
    or AlreadyClaimed (409), ScanMismatch (409, nothing runs), KeyReused (422)."""
    key = idempotency.clean_key(idempotency_key)
    asked = _Asked(user, warehouse_id, str(notification_id), code, scan, key)
    if key is not None:
        before = asked.earlier()
        if before is not None:
            return before
    held = catalog.current()
    candidates = held.with_code(code)
    if candidates and not any(e.confirm_field for e in candidates.values()):
        # Nothing to check against the alert's data first: read and claim in one call.
        claimed = lifecycle.claim_to_act(
            user=user,
            warehouse_id=warehouse_id,
            notification_id=notification_id,
            types=candidates.keys(),
        )
        if claimed is None:
            raise NoSuchAction(gettext("This alert has no action %(code)s.") % {"code": code})
        return asked.start(claimed, candidates[claimed.notification.message_type])
    item = lifecycle.peek(user=user, warehouse_id=warehouse_id, notification_id=notification_id)
    entry = held.find(item.notification.message_type, code)
    if entry is None:
        raise NoSuchAction(gettext("This alert has no action %(code)s.") % {"code": code})
    state = item.lifecycle
    if state.status == Status.RESOLVED:
        raise lifecycle.AlreadyResolved(gettext("Already resolved."), item)
    holder = state.claimed_by
    if state.status == Status.CLAIMED and holder is not None and holder.id != user.pk:
        raise lifecycle.AlreadyClaimed(
            gettext("Already claimed by %(user)s.") % {"user": holder.username}, item
        )
    if entry.confirm_field:
        expected = catalog.scannable(item.notification.data, entry.confirm_field)
        if expected is None:  # nothing could ever match: say why, as the page does
            raise ScanMismatch(catalog.unavailable_reason(entry.confirm_field), entry.confirm_field)
        if scan is None or _normal(scan) != _normal(expected):
            raise ScanMismatch(
                gettext("The scan does not match this alert's %(field)s.")
                % {"field": entry.confirm_field},
                entry.confirm_field,
            )
    if state.status == Status.OPEN:
        item = lifecycle.claim(
            user=user, warehouse_id=warehouse_id, notification_id=notification_id
        )
    return asked.start(item, entry)


@dataclass(frozen=True)
class _Asked:
    """One press as the client made it."""

    user: User
    warehouse_id: int
    notification_id: str
    code: str
    scan: str | None
    key: str | None

    @property
    def fingerprint(self) -> str:
        request = {
            "warehouse": self.warehouse_id,
            "notification": self.notification_id,
            "action": self.code,
            "scan": self.scan,
        }
        return idempotency.fingerprint(
            scope=f"u:{self.user.pk}", operation="action", request=request
        )

    def earlier(self) -> Pressed | None:
        """The run this user's press with the same Idempotency-Key started (within
        IDEMPOTENCY_TTL_SECONDS), answered as it was then; KeyReused for another request."""
        if self.key is None:
            return None
        since = timestamps.now() - dt.timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
        run = (
            ActionRun.objects.select_related("action", "message")
            .filter(
                user=self.user,
                idempotency_key=idempotency.key_digest(self.key),
                created_at__gte=since,
            )
            .first()
        )
        if run is None:
            return None
        if run.idempotency_fingerprint != self.fingerprint:
            raise idempotency.KeyReused(
                gettext(
                    "This Idempotency-Key was used for a different request; "
                    "use a new key for a new request."
                )
            )
        _record_started(run)  # in case the first attempt's answer was lost before it
        return Pressed(run=run, created=True, replayed=run.first_answer)

    def start(self, item: InboxItem, entry: catalog.Entry) -> Pressed:
        """The run and its outbox message in one transaction (one database write), then the
        history's `action`, then the outbox's task; or the run that answers instead."""
        user = self.user
        run = ActionRun(
            id=uuid.uuid4(),
            action_id=entry.id,
            warehouse_id=self.warehouse_id,
            notification_id=item.notification.id,
            user=user,
            username=user.get_username(),
            scan=self.scan or "",
            created_at=timestamps.now(),
        )
        run.action = _action_ref(entry)
        body = {
            "run": str(run.pk),
            "action": entry.code,
            "notification": notification_dict(item),
            "by": {"id": user.pk, "username": user.get_username()},
            "scan": self.scan,
        }
        if self.key is not None:
            run.idempotency_key = idempotency.key_digest(self.key)
            run.idempotency_fingerprint = self.fingerprint
            run.first_answer = {"run": run_dict(run)}
        try:
            with transaction.atomic():
                run.message = outbox.enqueue(
                    kind=WEBHOOK,
                    payload={"body": body},
                    message_id=run.pk,
                    max_attempts=settings.ALERT_ACTION_MAX_ATTEMPTS,
                    queue_on_commit=False,
                )
                run.save(force_insert=True)
        except IntegrityError:
            return self._instead(entry, item)
        # After the commit: a Redis failure here answers 503 and the retry finds the run (by
        # its key, or as the action's live run), recording `action` then; the message is sent
        # by beat's next pass if it is never queued here.
        _record_started(run)
        outbox.queue(run.pk)
        return Pressed(run=run, created=True)

    def _instead(self, entry: catalog.Entry, item: InboxItem) -> Pressed:
        """The insert lost to another press: the same key's (its answer), or the live run."""
        before = self.earlier()
        if before is not None:
            return before
        earlier = live_run(entry.id, self.warehouse_id, self.notification_id)
        if earlier is None:  # it ended between the insert and this read: press again
            holder = item.lifecycle.claimed_by
            raise errors.Conflict(
                gettext("Another press of this action ended; try again."),
                # A press's 409 says who holds the alert, as every other one does (the schema).
                extra={
                    "claimed_by": None
                    if holder is None
                    else {"id": holder.id, "username": holder.username}
                },
            )
        _record_started(earlier)
        return Pressed(run=earlier, created=False)


def _action_ref(entry: catalog.Entry) -> Any:
    """An AlertAction with the catalog's values (for run_dict without a query)."""
    from .models import AlertAction

    return AlertAction(pk=entry.id, code=entry.code, resolves=entry.resolves)


def _record_started(run: ActionRun) -> None:
    """`action` (with its code, by the presser) in the alert's history, once per run."""
    record = f"run:{run.pk}:action"
    lifecycle.record_event(
        warehouse_id=run.warehouse_id,
        notification_id=run.notification_id,
        event=Event.ACTION,
        by=None if run.user_id is None else Actor(id=run.user_id, username=run.username),
        extra={"code": run.action.code, "run": str(run.pk)},
        guard=Guard(
            record=notification_keys.idempotency(run.warehouse_id, "python", record),
            fingerprint=idempotency.fingerprint(scope="python", operation="action", request=record),
        ),
    )


def live_run(action_id: int, warehouse_id: int, notification_id: str) -> ActionRun | None:
    return (
        ActionRun.objects.select_related("action", "message")
        .filter(
            action_id=action_id,
            warehouse_id=warehouse_id,
            notification_id=notification_id,
            status__in=LIVE,
        )
        .first()
    )


def run_dict(run: ActionRun) -> dict[str, Any]:
    """R (SPEC 14): {"id", "action", "status", "attempts", "result", "created_at",
    "finished_at", "by"}, and `error` (`run_error`)."""
    message = run.message
    return {
        "id": str(run.pk),
        "action": run.action.code,
        "status": str(run.status),
        "attempts": int(run.attempts if message is None else message.attempts),
        "result": run.result if run.status != RunStatus.PENDING else None,
        "created_at": iso(run.created_at),
        "finished_at": None if run.finished_at is None else iso(run.finished_at),
        "by": None if run.user_id is None else {"id": run.user_id, "username": run.username},
        "error": run_error(run),
    }


class ErrorKind(StrEnum):
    """What went wrong with a webhook call, as R's `error.kind` says it."""

    ANSWERED = "answered"  # the WMS answered, with a status that is not success
    TIMEOUT = "timeout"  # no answer within ALERT_WEBHOOK_TIMEOUT_SECONDS
    UNREACHABLE = "unreachable"  # no connection (refused, no route, TLS not accepted)
    REFUSED = "refused"  # this server may not call the URL (ALERT_WEBHOOK_ALLOWED_HOSTS)
    OTHER = "other"


_HTTP_STATUS = re.compile(r"HTTP (\d{3})")


def run_error(run: ActionRun) -> dict[str, Any] | None:
    """What went wrong, for the page to say (SPEC 14, "Outcomes on the page"): `{"kind",
    "http_status", "message"}`, the message in words of the active language. A failed run:
    why it failed (and how often it was tried); a pending one: why its last attempt failed,
    if one did (it is tried again); otherwise None. Read from the outbox message's last error,
    as `Webhooks.send` wrote it."""
    if run.status == RunStatus.SUCCEEDED:
        return None
    message = run.message
    error = "" if message is None else message.last_error
    if not error:
        if run.status == RunStatus.PENDING:
            return None
        error = run.result or "?"
    kind, status, words = _described(error)
    attempts = 0 if message is None else int(message.attempts)
    if run.status == RunStatus.PENDING:
        words = f"{words} {gettext('It will be tried again.')}"
    elif attempts > 1:
        tried = ngettext("Tried %(count)s time.", "Tried %(count)s times.", attempts)
        words = f"{words} {tried % {'count': attempts}}"
    return {"kind": str(kind), "http_status": status, "message": words}


def _described(error: str) -> tuple[ErrorKind, int | None, str]:
    """A webhook call's error (`Webhooks.send`: "HTTP 404", "refused: …", "<requests'
    exception>: …") as its kind, its HTTP status and a sentence."""
    answered = _HTTP_STATUS.fullmatch(error.strip())
    if answered:
        status = int(answered[1])
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            return (
                ErrorKind.ANSWERED,
                status,
                gettext("The WMS answered %(status)s.") % {"status": status},
            )
        words = gettext("The WMS answered %(status)s (%(phrase)s).")
        return ErrorKind.ANSWERED, status, words % {"status": status, "phrase": phrase}
    if error.startswith("refused:"):
        return (
            ErrorKind.REFUSED,
            None,
            gettext(
                "This server may not call the action's webhook (its address is not allowed "
                "any more): ask an administrator."
            ),
        )
    name = error.split(":", 1)[0].strip()
    raised = getattr(requests.exceptions, name, None)
    if isinstance(raised, type) and issubclass(raised, requests.RequestException):
        if issubclass(raised, requests.Timeout):
            seconds = f"{settings.ALERT_WEBHOOK_TIMEOUT_SECONDS:g}"
            words = gettext("The WMS did not answer within %(seconds)s seconds.")
            return ErrorKind.TIMEOUT, None, words % {"seconds": seconds}
        if issubclass(raised, requests.exceptions.SSLError):
            words = gettext("The WMS could not be reached: its certificate was not accepted.")
            return ErrorKind.UNREACHABLE, None, words
        return ErrorKind.UNREACHABLE, None, gettext("The WMS could not be reached.")
    words = gettext("The action could not be done (%(error)s).")
    return ErrorKind.OTHER, None, words % {"error": error[:200]}


# --- The outbox's handler of webhooks -------------------------------------------------------


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


# --- Reads ------------------------------------------------------------------------------------


def runs_of(
    *, user: User, warehouse_id: int, notification_id: str, limit: int = 50
) -> list[ActionRun]:
    """The runs of every action on the alert, newest first; NotVisible (404) when the user
    cannot see it."""
    lifecycle.peek(user=user, warehouse_id=warehouse_id, notification_id=notification_id)
    return list(
        ActionRun.objects.select_related("action", "message")
        .filter(warehouse_id=warehouse_id, notification_id=str(notification_id))
        .order_by("-created_at")[:limit]
    )
