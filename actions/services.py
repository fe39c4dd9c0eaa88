"""Writes of alert actions (SPEC 14): pressing one.

A press is decided on the alert in Redis (visible, of a type that has the action, not
resolved, not someone else's, the scan matching; claimed for the presser when open): one
script call that reads and claims (`lifecycle.claim_to_act`) when the action has nothing to
check against the alert's data, else a read, the scan's check, then the claim. Then one
database transaction writes the run and its outbox message (a Redis failure before it leaves
no run). After the commit, the history's `action` event (once per run) and the outbox's task
are recorded and queued; should either fail, the press's retry (by its Idempotency-Key, or
as the action's live run) records `action`, and beat's next pass sends the message. The
outbox's task posts the webhook and settles the run (actions/webhooks.py); the runs are read
through actions/selectors.py and put in answers by actions/api/serializers.py.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext

from config import errors, idempotency, timestamps
from config.idempotency import Guard
from config.users import User
from notifications import keys as notification_keys
from notifications import lifecycle
from notifications.api.serializers import notification_dict
from notifications.domain import Actor, Event, InboxItem, Status
from outbox import services as outbox

from . import catalog
from .api.serializers import run_dict
from .models import ActionRun
from .selectors import live_run
from .webhooks import WEBHOOK


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
