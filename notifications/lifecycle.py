"""Writes of the alert lifecycle (SPEC section 7): claim, release, resolve, escalate, re-raise.

Each change is one atomic script call (lua/lifecycle.lua) that gives the notification a new
cursor, so polling clients receive its new state; reads of its history are in selectors.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils.translation import gettext

from config import errors, timestamps
from config.errors import DomainError
from config.users import User
from push import dispatch as push_dispatch
from shifts import selectors as shift_selectors
from subscriptions.models import MessageType, Warehouse

from . import lifecycle_store
from .domain import Actor, InboxItem
from .lifecycle_store import Answer, Outcome
from .selectors import role_ids_of

logger = logging.getLogger(__name__)


class LifecycleError(DomainError):
    """A change the notification's state does not allow; `item` is its current state, and
    the answer says who holds it (`claimed_by`, SPEC section 7)."""

    def __init__(self, message: str, item: InboxItem | None = None) -> None:
        holder = item.lifecycle.claimed_by if item is not None else None
        claimed_by = None if holder is None else {"id": holder.id, "username": holder.username}
        super().__init__(message, extra={"claimed_by": claimed_by} if item else None)
        self.item = item


class NotVisible(LifecycleError, errors.NotFound):
    """Unknown, expired, or in none of the user's inboxes (their own or their roles')."""


class AlreadyClaimed(LifecycleError, errors.Conflict):
    """Someone else holds it."""


class AlreadyResolved(LifecycleError, errors.Conflict):
    """Resolved: nobody can claim or release it any more."""


class NotClaimer(LifecycleError, errors.Forbidden):
    """Only the user who claimed it may release it."""


def actor_of(user: User) -> Actor:
    return Actor(id=int(user.pk), username=user.get_username())


def _by_user(op: str, *, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    answer = lifecycle_store.change_by_user(
        op,
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        actor=actor_of(user),
        role_ids=role_ids_of(user),
        now_ms=timestamps.now_ms(),
    )
    return _checked(answer)


def _checked(answer: Answer) -> InboxItem:
    item = answer.item
    if answer.outcome == Outcome.MISSING or item is None:
        raise NotVisible(gettext("No such notification here (or it has expired)."))
    state = item.lifecycle
    holder = state.claimed_by.username if state.claimed_by else gettext("someone else")
    if answer.outcome == Outcome.TAKEN:
        raise AlreadyClaimed(gettext("Already claimed by %(user)s.") % {"user": holder}, item)
    if answer.outcome == Outcome.RESOLVED:
        raise AlreadyResolved(gettext("Already resolved."), item)
    if answer.outcome == Outcome.FORBIDDEN:
        raise NotClaimer(
            gettext("Only %(user)s, who claimed it, can release it.") % {"user": holder}, item
        )
    return item


def claim(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """Take it on ("I'm on it"); it is also read for the user. Atomic: of concurrent claimers
    exactly one wins, the others get AlreadyClaimed. Claiming again what one holds is fine."""
    return _by_user("claim", user=user, warehouse_id=warehouse_id, notification_id=notification_id)


def release(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """Back to open, by the claimer only (NotClaimer otherwise); releasing an open one is a
    no-op."""
    return _by_user(
        "release", user=user, warehouse_id=warehouse_id, notification_id=notification_id
    )


def resolve(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """Done, by anyone who can see it. Idempotent: resolving a resolved one changes nothing."""
    return _by_user(
        "resolve", user=user, warehouse_id=warehouse_id, notification_id=notification_id
    )


def resolve_by_system(*, warehouse_id: int, notification_id: str) -> bool:
    """Resolve with resolved_by null (a rule's condition cleared). False: it was already
    resolved, or is gone."""
    answer = lifecycle_store.resolve_by_system(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        now_ms=timestamps.now_ms(),
    )
    return answer.changed


def release_by_system(*, warehouse_id: int, notification_id: str, holder_id: int) -> bool:
    """Back to open, by nobody, if `holder_id` still holds it (the claim of someone going off
    shift, SPEC 13). False: someone else holds it now, or it is open, resolved or gone."""
    answer = lifecycle_store.release_held(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        holder_id=int(holder_id),
        now_ms=timestamps.now_ms(),
    )
    return answer.changed


def reraise(*, warehouse_id: int, notification_id: str) -> Answer | None:
    """Raise a still open (or claimed) alert again: occurrences + 1, unread again for everyone,
    a new cursor. None when it is resolved or gone, and a new notification is due instead."""
    answer = lifecycle_store.reraise(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        now_ms=timestamps.now_ms(),
    )
    return answer if answer.changed else None


# --- Escalation (Celery beat) ----------------------------------------------------------------


def escalate_warehouse(warehouse_id: int, *, at_ms: int | None = None) -> int:
    """Escalate every notification of one warehouse that is due and still open; returns how many.

    Works in batches of settings.NOTIFICATION_ESCALATION_BATCH. Each one is taken out of the
    escalations index by the script that escalates it, so it happens once however many workers
    run this at the same time; one claimed or resolved by then is only taken out.

    Shifts (SPEC 13): one whose escalation role has shifts in this warehouse and none running
    waits, unless it is critical: its due time in the index becomes the role's next shift
    start, when a later beat escalates it (if still open then). Moving it out of the due range
    keeps this loop bounded.
    """
    now = timestamps.now_ms() if at_ms is None else at_ms
    limit = settings.NOTIFICATION_ESCALATION_BATCH
    roles: dict[str, int | None] = {}
    waits: dict[int, int | None] = {}  # role id -> ms its next shift starts (None: on now)
    escalated = 0
    while True:
        batch = lifecycle_store.due_for_escalation(warehouse_id, now_ms=now, limit=limit)
        levels = lifecycle_store.severity_levels(warehouse_id, [slot for slot, _ in batch])
        for (slot, type_code), level in zip(batch, levels, strict=True):
            if type_code not in roles:
                roles[type_code] = (
                    MessageType.objects.filter(code=type_code)
                    .values_list("escalation_role_id", flat=True)
                    .first()
                )
            role_id = roles[type_code]
            if role_id is not None and level is not None and level < CRITICAL_LEVEL:
                if role_id not in waits:
                    waits[role_id] = _off_shift_until(warehouse_id, role_id, now)
                until = waits[role_id]
                if until is not None:
                    lifecycle_store.postpone_escalation(warehouse_id, slot=slot, until_ms=until)
                    continue
            answer = lifecycle_store.escalate(
                warehouse_id=warehouse_id, slot=slot, role_id=roles[type_code], now_ms=now
            )
            escalated += answer.changed
            if answer.changed and answer.item is not None and roles[type_code] is not None:
                push_dispatch.after_escalation(answer.item, inboxes=[f"r:{roles[type_code]}"])
        if len(batch) < limit:
            return escalated


CRITICAL_LEVEL = 2


def _off_shift_until(warehouse_id: int, role_id: int, now_ms: int) -> int | None:
    """When the role's next shift starts there (ms), if it has shifts there and none runs
    now; None when it is on (or has no shifts there: always on)."""
    at = timestamps.ms_to_datetime(now_ms)
    if shift_selectors.role_on_shift(warehouse_id=warehouse_id, role_id=role_id, at=at):
        return None
    start = shift_selectors.role_next_start(warehouse_id=warehouse_id, role_id=role_id, at=at)
    return None if start is None else int(start.timestamp() * 1000)


def escalate_all(*, at_ms: int | None = None) -> int:
    """What Celery beat runs (every NOTIFICATION_ESCALATION_SECONDS): every warehouse."""
    total = 0
    for warehouse_id in Warehouse.objects.values_list("id", flat=True):
        total += escalate_warehouse(warehouse_id, at_ms=at_ms)
    return total
