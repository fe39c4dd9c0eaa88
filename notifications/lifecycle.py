"""Writes of the alert lifecycle (SPEC section 7): claim, release, resolve, escalate, re-raise,
and each user's snooze (SPEC section 13).

Each change is one atomic script call (notifications/readmodel/lua/, one per change) that gives
the notification a new cursor, so polling clients receive its new state; reads of its history
are in selectors.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum

from django.conf import settings
from django.utils.translation import gettext

from config import errors, idempotency, metrics, timestamps
from config.errors import DomainError
from config.idempotency import Guard, Replay
from config.users import User
from subscriptions.models import MessageType, Warehouse

from . import hooks, lifecycle_store
from .domain import Actor, Event, InboxItem
from .lifecycle_store import Answer, Outcome
from .selectors import role_ids_of
from .store import idempotency_guard

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


class Unclaimable(LifecycleError):
    """Of a type that is read, not claimed or resolved (hooks.unclaimable_types): 422."""

    kind = errors.ErrorKind.UNPROCESSABLE
    default_code = "not_claimable"


def actor_of(user: User) -> Actor:
    return Actor(id=int(user.pk), username=user.get_username())


def _by_user(
    op: str,
    *,
    user: User,
    warehouse_id: int,
    notification_id: str,
    now_ms: int | None = None,
    args: tuple[object, ...] = (),
    guard: idempotency.Guard | None = None,
) -> Answer:
    return lifecycle_store.change_by_user(
        op,
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        actor=actor_of(user),
        role_ids=role_ids_of(user),
        now_ms=timestamps.now_ms() if now_ms is None else now_ms,
        args=args,
        guard=guard,
        unclaimable=hooks.unclaimable_types,
    )


def _checked(answer: Answer) -> InboxItem:
    item = answer.item
    error: LifecycleError
    if answer.outcome == Outcome.MISSING or item is None:
        error = NotVisible(gettext("No such notification here (or it has expired)."))
    else:
        state = item.lifecycle
        holder = state.claimed_by.username if state.claimed_by else gettext("someone else")
        if answer.outcome == Outcome.TAKEN:
            error = AlreadyClaimed(gettext("Already claimed by %(user)s.") % {"user": holder}, item)
        elif answer.outcome == Outcome.RESOLVED:
            error = AlreadyResolved(gettext("Already resolved."), item)
        elif answer.outcome == Outcome.UNCLAIMABLE:
            error = Unclaimable(
                gettext("This notification is to be read: it cannot be claimed or resolved.")
            )
        elif answer.outcome == Outcome.FORBIDDEN:
            error = NotClaimer(
                gettext("Only %(user)s, who claimed it, can release it.") % {"user": holder},
                item,
            )
        else:
            return item
    error.replayed = answer.replayed  # a refusal answered again is the same refusal
    raise error


class Action(StrEnum):
    """What a user does to an alert (SPEC 7); the page may send it again (SPEC 12)."""

    CLAIM = "claim"
    RELEASE = "release"
    RESOLVE = "resolve"


@dataclass(frozen=True)
class Done:
    """The alert after a user's action, and whether that was the answer of the same request
    made before with the same Idempotency-Key (`replayed`: nothing was changed now)."""

    item: InboxItem
    replayed: bool = False


def act(
    action: Action,
    *,
    user: User,
    warehouse_id: int,
    notification_id: str,
    idempotency_key: str | None = None,
) -> Done:
    """Claim, release or resolve (see each below).

    `idempotency_key` (1-255 printable characters; SPEC 11 and 12): a repeat by the same user
    within IDEMPOTENCY_TTL_SECONDS answers what the first one answered (its refusal too:
    AlreadyClaimed, NotClaimer, ... with `replayed` set) and changes nothing, whatever
    happened to the alert since; the key with another action or alert raises KeyReused.
    """
    key = idempotency.clean_key(idempotency_key)
    guard = None
    if key is not None:
        guard = idempotency_guard(
            warehouse_id=warehouse_id,
            scope=idempotency.user_scope(user.pk),
            key=key,
            operation=action,
            request={"warehouse": int(warehouse_id), "notification": str(notification_id)},
        )
    answer = _by_user(
        action, user=user, warehouse_id=warehouse_id, notification_id=notification_id, guard=guard
    )
    if answer.replayed:
        metrics.IDEMPOTENT_REPLAYS.labels(action).inc()
    done = Done(_checked(answer), answer.replayed)
    if not done.replayed:
        _announce_change(done.item, action, by=actor_of(user))
    return done


def _announce_change(item: InboxItem, step: str, *, by: Actor | None) -> None:
    n = item.notification
    hooks.announce(hooks.Changed(n.warehouse, n.id, step=str(step), by=by, item=item))


def peek(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """The notification as the user sees it now, changing nothing; NotVisible when they
    cannot see it (unknown, expired, in none of their inboxes)."""
    found = lifecycle_store.history(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        actor=actor_of(user),
        role_ids=role_ids_of(user),
        now_ms=timestamps.now_ms(),
    )
    if found is None:
        raise NotVisible(gettext("No such notification here (or it has expired)."))
    return found[0]


def record_event(
    *,
    warehouse_id: int,
    notification_id: str,
    event: Event,
    by: Actor | None,
    extra: dict[str, object] | None = None,
    guard: Guard | None = None,
    answer: str = "",
) -> Replay | bool:
    """Add a feature's event to the notification's history (SPEC 14: `action`, `emailed`, ...)
    without changing its state: True when recorded, False when it is gone. With a `guard`, the
    event is recorded once under it (the Replay of the first time comes back after that)."""
    return lifecycle_store.record_event(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        event=event,
        now_ms=timestamps.now_ms(),
        actor=by,
        extra=extra,
        guard=guard,
        answer=answer,
    )


def claim(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """Take it on ("I'm on it"); it is also read for the user. Atomic: of concurrent claimers
    exactly one wins, the others get AlreadyClaimed. Claiming again what one holds is fine."""
    return act(
        Action.CLAIM, user=user, warehouse_id=warehouse_id, notification_id=notification_id
    ).item


def claim_to_act(
    *, user: User, warehouse_id: int, notification_id: str, types: Collection[str]
) -> InboxItem | None:
    """Claim it for a press of an alert action (SPEC 14) in one call, reading and claiming:
    claimed for the user when open, unchanged when they hold it already; None, changing
    nothing, when it is not of one of `types` (those that have the action). Raises NotVisible,
    AlreadyResolved or AlreadyClaimed (someone else holds it) as `claim` does."""
    answer = _by_user(
        Action.CLAIM,
        user=user,
        warehouse_id=warehouse_id,
        notification_id=notification_id,
        args=(" ".join(sorted(types)),),
    )
    if answer.outcome == Outcome.OTHER_TYPE:
        return None
    item = _checked(answer)
    _announce_change(item, Action.CLAIM, by=actor_of(user))
    return item


def release(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """Back to open, by the claimer only (NotClaimer otherwise); releasing an open one is a
    no-op."""
    return act(
        Action.RELEASE, user=user, warehouse_id=warehouse_id, notification_id=notification_id
    ).item


def resolve(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """Done, by anyone who can see it. Idempotent: resolving a resolved one changes nothing."""
    return act(
        Action.RESOLVE, user=user, warehouse_id=warehouse_id, notification_id=notification_id
    ).item


def resolve_by_system(*, warehouse_id: int, notification_id: str) -> bool:
    """Resolve with resolved_by null (a rule's condition cleared). False: it was already
    resolved, or is gone."""
    answer = lifecycle_store.resolve_by_system(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        now_ms=timestamps.now_ms(),
    )
    return _announce_by_system(answer, Action.RESOLVE, warehouse_id, str(notification_id))


def release_by_system(*, warehouse_id: int, notification_id: str, holder_id: int) -> bool:
    """Back to open, by nobody, if `holder_id` still holds it (the claim of someone going off
    shift, SPEC 13). False: someone else holds it now, or it is open, resolved or gone."""
    answer = lifecycle_store.release_held(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        holder_id=int(holder_id),
        now_ms=timestamps.now_ms(),
    )
    return _announce_by_system(answer, Action.RELEASE, warehouse_id, str(notification_id))


def _announce_by_system(
    answer: Answer, action: Action, warehouse_id: int, notification_id: str
) -> bool:
    """Tell the features that follow changes about a step the system took, if it changed
    anything; the answer's `changed`."""
    if answer.changed:
        hooks.announce(hooks.Changed(warehouse_id, notification_id, action, None, answer.item))
    return answer.changed


def reraise(*, warehouse_id: int, notification_id: str) -> Answer | None:
    """Raise a still open (or claimed) alert again: occurrences + 1, unread again for everyone,
    a new cursor. None when it is resolved or gone, and a new notification is due instead.
    A planned silence covering it now holds it back (SPEC 17)."""
    now_ms = timestamps.now_ms()
    kind = lifecycle_store.type_and_severity(warehouse_id, str(notification_id))
    silence_id = None
    if kind is not None:
        silence_id = hooks.silences.covering(
            warehouse_id=warehouse_id, type_code=kind[0], severity=kind[1], at_ms=now_ms
        )
    answer = lifecycle_store.reraise(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        now_ms=now_ms,
        silence_id=silence_id,
    )
    return answer if answer.changed else None


# --- Snooze (SPEC section 13) -----------------------------------------------------------------

NEXT_SHIFT = "next_shift"


class NoShift(errors.Invalid):
    """`next_shift` asked, and no shift of the user's roles starts in that warehouse."""

    default_code = "no_shift"


def next_shift_start_ms(*, user: User, warehouse_id: int, at_ms: int) -> int | None:
    """When the next shift of one of the user's roles starts in the warehouse (ms), or None
    (none of their roles has a shift there). From the shifts feature (hooks.shifts)."""
    start = hooks.shifts.next_shift_start(
        user=user, warehouse_id=warehouse_id, at=timestamps.ms_to_datetime(at_ms)
    )
    return None if start is None else int(start.timestamp() * 1000)


def snooze(*, user: User, warehouse_id: int, notification_id: str, until: int | str) -> InboxItem:
    """Hide an open or claimed alert from the user alone (their unread count, by_severity,
    latest and default list) until `until` (ms since the epoch, or NEXT_SHIFT); it then comes
    back unread with a new cursor. Snoozing again moves the time. Invalid for a time not in the
    future or more than NOTIFICATION_SNOOZE_MAX_SECONDS ahead; AlreadyResolved for a resolved
    one."""
    now = timestamps.now_ms()
    if until == NEXT_SHIFT:
        start = next_shift_start_ms(user=user, warehouse_id=warehouse_id, at_ms=now)
        if start is None:
            raise NoShift(
                gettext("No shift of your roles starts in this warehouse."), field="until"
            )
        until = start
    if not isinstance(until, int):
        raise errors.Invalid(gettext('A time or "next_shift" is required.'), field="until")
    if until <= now:
        raise errors.Invalid(gettext("The time must be in the future."), field="until")
    most = int(settings.NOTIFICATION_SNOOZE_MAX_SECONDS)
    if until > now + most * 1000:
        raise errors.Invalid(
            gettext("A snooze can last at most %(hours)s hours.") % {"hours": most // 3600},
            field="until",
        )
    return _checked(
        _by_user(
            "snooze",
            user=user,
            warehouse_id=warehouse_id,
            notification_id=notification_id,
            now_ms=now,
            args=(until,),
        )
    )


def wake(*, user: User, warehouse_id: int, notification_id: str) -> InboxItem:
    """End the user's snooze of it now (a no-op when they have none): unread again for them,
    with a new cursor."""
    return _checked(
        _by_user("wake", user=user, warehouse_id=warehouse_id, notification_id=notification_id)
    )


def wake_due_warehouse(warehouse_id: int, *, at_ms: int | None = None) -> int:
    """Wake every snooze of one warehouse whose time has come; returns how many came back.

    Reads due entries by score in batches of settings.NOTIFICATION_SNOOZE_BATCH (never all
    alerts); the script wakes only those still due, so concurrent workers wake each once.
    """
    now = timestamps.now_ms() if at_ms is None else at_ms
    limit = settings.NOTIFICATION_SNOOZE_BATCH
    woken = 0
    while True:
        due = lifecycle_store.due_snoozes(warehouse_id, now_ms=now, limit=limit)
        woken += lifecycle_store.wake_due(warehouse_id, entries=due, now_ms=now)
        if len(due) < limit:
            return woken


def wake_due_all(*, at_ms: int | None = None) -> int:
    """What Celery beat runs (every NOTIFICATION_SNOOZE_WAKE_SECONDS): every warehouse."""
    total = 0
    for warehouse_id in Warehouse.objects.values_list("id", flat=True):
        total += wake_due_warehouse(warehouse_id, at_ms=at_ms)
    return total


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
                hooks.announce(hooks.Escalated(answer.item, [f"r:{roles[type_code]}"]))
        if len(batch) < limit:
            return escalated


CRITICAL_LEVEL = 2


def _off_shift_until(warehouse_id: int, role_id: int, now_ms: int) -> int | None:
    """When the role's next shift starts there (ms), if it has shifts there and none runs
    now; None when it is on (or has no shifts there: always on)."""
    at = timestamps.ms_to_datetime(now_ms)
    if hooks.shifts.role_on_shift(warehouse_id=warehouse_id, role_id=role_id, at=at):
        return None
    start = hooks.shifts.role_next_start(warehouse_id=warehouse_id, role_id=role_id, at=at)
    return None if start is None else int(start.timestamp() * 1000)


def escalate_all(*, at_ms: int | None = None) -> int:
    """What Celery beat runs (every NOTIFICATION_ESCALATION_SECONDS): every warehouse."""
    total = 0
    for warehouse_id in Warehouse.objects.values_list("id", flat=True):
        total += escalate_warehouse(warehouse_id, at_ms=at_ms)
    return total
