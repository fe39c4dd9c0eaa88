"""Writes of handovers (SPEC 13): at each shift end, what the shift hands to the next, once.

Beat runs `hand_over_due` every SHIFT_HANDOVER_SECONDS. For every shift occurrence that ended
in the last SHIFT_HANDOVER_LOOKBACK_SECONDS and has no finished handover, `hand_over`:

1. creates the Handover row; the unique constraint (shift, end) makes it one row however many
   beats or workers race, and a lease on the row lets one of them do the work at a time;
2. reads the role's inbox in that warehouse in bounded pages (SHIFT_HANDOVER_BATCH per Redis
   call) and builds the content: alerts still open, claimed by someone going off shift,
   escalated during the shift, resolved during the shift (with the median time to claim);
3. when the shift releases claims, gives back the claims of members going off shift, each
   with a `released` event by nobody (only while they still hold it);
4. publishes one SHIFT_HANDOVER notification to the role's inbox there (whether or not the
   role subscribes), with an Idempotency-Key of the handover: a worker that crashed after
   publishing and is retried by a later tick publishes nothing again. Then the row is
   finished. Its `data` holds the handover's id as `handover_id`, and the shift and role
   names and the counts, from which the page tells it in the reader's language (its stored
   title and body are in the worker's: shifts/wording.py).

Going off shift: a member of the shift's role for whom no shift of their roles in that
warehouse runs at the instant the shift ended (the next run of the same shift counts: a
24-hour shift hands over to its own members, who keep their claims).
"""

from __future__ import annotations

import datetime as dt
import logging
import statistics
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from config import timestamps
from config.errors import Conflict, NotFound
from directory import cache as directory_cache
from notifications import lifecycle, lifecycle_store
from notifications import selectors as notification_selectors
from notifications.lifecycle_store import InboxEntry
from notifications.services import publish
from subscriptions.models import MessageType

from . import cache, schedule, wording
from .cache import ShiftEntry
from .models import Handover
from .schedule import Occurrence

logger = logging.getLogger(__name__)

HANDOVER_TYPE = "SHIFT_HANDOVER"
LEASE = dt.timedelta(minutes=2)


def handover_type() -> MessageType:
    """The SHIFT_HANDOVER type (made by a migration; made again here if someone deleted it)."""
    found, _created = MessageType.objects.get_or_create(
        code=HANDOVER_TYPE,
        defaults={
            "name": "交接班",
            "name_en": "Shift handover",
            "default_ttl_seconds": 24 * 3600,
        },
    )
    if not found.is_active:
        MessageType.objects.filter(pk=found.pk).update(is_active=True)
    return found


def _ms(value: dt.datetime) -> int:
    return int(value.timestamp() * 1000)


def _summary(entry: InboxEntry) -> dict[str, Any]:
    state = entry.state or {}
    return {
        "id": entry.content["id"],
        "message_type": entry.content["message_type"],
        "title": entry.content["title"],
        "severity": state.get("severity") or _severity(entry),
        "status": state.get("status") or "open",
        "created_at": timestamps.iso_ms(int(entry.content["created_at_ms"])),
        "claimed_by": state.get("claimed_by"),
        "escalated_at": _iso(state.get("escalated_at")),
        "resolved_at": _iso(state.get("resolved_at")),
    }


def _severity(entry: InboxEntry) -> str:
    return str(entry.content.get("severity") or "info")


def _iso(ms: Any) -> str | None:
    return None if ms is None else timestamps.iso_ms(int(ms))


@dataclass
class _Section:
    count: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)

    def add(self, summary: dict[str, Any]) -> None:
        self.count += 1
        if len(self.items) < settings.SHIFT_HANDOVER_MAX_ITEMS:
            self.items.append(summary)


@dataclass
class Reading:
    """What a walk over the role's inbox found."""

    open: _Section = field(default_factory=_Section)
    claimed_off_shift: _Section = field(default_factory=_Section)
    escalated: _Section = field(default_factory=_Section)
    resolved: _Section = field(default_factory=_Section)
    claim_ms: list[int] = field(default_factory=list)
    to_release: list[tuple[str, int]] = field(default_factory=list)  # (id, holder)
    pages: int = 0


def read_inbox(
    *, warehouse_id: int, role_id: int, occurrence: Occurrence, outgoing: set[int], now_ms: int
) -> Reading:
    """Walk the role's inbox page by page (SHIFT_HANDOVER_BATCH per Redis call)."""
    start_ms, end_ms = _ms(occurrence.start), _ms(occurrence.end)
    reading = Reading()
    after = 0
    while True:
        entries, last = lifecycle_store.inbox_entries_after(
            warehouse_id, f"r:{role_id}", after_slot=after, count=settings.SHIFT_HANDOVER_BATCH
        )
        if last is None:
            return reading
        reading.pages += 1
        after = last
        for entry in entries:
            if entry.expires_at_ms <= now_ms or entry.content["message_type"] == HANDOVER_TYPE:
                continue
            state = entry.state or {}
            status = state.get("status") or "open"
            summary = _summary(entry)
            if status == "open":
                reading.open.add(summary)
            holder = (state.get("claimed_by") or {}).get("id")
            if status == "claimed" and holder in outgoing:
                reading.claimed_off_shift.add(summary)
                reading.to_release.append((entry.content["id"], int(holder)))
            escalated = state.get("escalated_at")
            if escalated is not None and start_ms <= int(escalated) < end_ms:
                reading.escalated.add(summary)
            resolved = state.get("resolved_at")
            if status == "resolved" and resolved is not None and start_ms <= resolved < end_ms:
                reading.resolved.add(summary)
                first_claim = state.get("first_claimed_at")
                if first_claim is not None:
                    reading.claim_ms.append(int(first_claim) - int(entry.content["created_at_ms"]))


def going_off(*, shift: ShiftEntry, occurrence: Occurrence) -> set[int]:
    """Members of the shift's role for whom no shift of their roles there runs at its end."""
    shifts = cache.schedule().of(shift.warehouse_id)
    members = {user_id for user_id, _name in cache.schedule().members.get(shift.role_id, ())}
    off = set()
    for user_id in members:
        roles = set(directory_cache.role_ids(User(pk=user_id)))
        if not any(
            s.role_id in roles and schedule.is_running(s.times, occurrence.end) for s in shifts
        ):
            off.add(user_id)
    return off


def snoozed_by_the_role(*, shift: ShiftEntry, occurrence: Occurrence) -> list[dict[str, Any]]:
    """Alerts of the warehouse that members of the shift's role snoozed past the change, the
    earliest waking first. Bounded: at most SHIFT_HANDOVER_MAX_ITEMS snoozes are read (of
    everyone's), so a warehouse with many more snoozes lists the ones waking soonest."""
    members = {user_id for user_id, _name in cache.schedule().members.get(shift.role_id, ())}
    names = dict(cache.schedule().members.get(shift.role_id, ()))
    found = notification_selectors.snoozed_past(
        warehouse_id=shift.warehouse_id,
        at_ms=_ms(occurrence.end),
        limit=settings.SHIFT_HANDOVER_MAX_ITEMS,
    )
    return [
        {
            "id": s.id,
            "title": s.title,
            "severity": s.severity,
            "status": s.status,
            "snoozed_by": {"id": s.user_id, "username": names.get(s.user_id, "")},
            "until": timestamps.iso_ms(s.until_ms),
        }
        for s in found
        if s.user_id in members
    ]


def build_content(
    reading: Reading, *, released: int, snoozed: list[dict[str, Any]]
) -> dict[str, Any]:
    """The handover's content (JSON): its sections, their counts, the median time to claim."""
    median = statistics.median(reading.claim_ms) / 1000 if reading.claim_ms else None
    sections = {
        "open": reading.open,
        "claimed_off_shift": reading.claimed_off_shift,
        "escalated": reading.escalated,
        "resolved": reading.resolved,
    }
    content: dict[str, Any] = {name: section.items for name, section in sections.items()}
    content["snoozed"] = snoozed
    content["counts"] = {name: section.count for name, section in sections.items()}
    content["counts"]["snoozed"] = len(snoozed)
    content["median_time_to_claim_seconds"] = median
    content["released"] = released
    return content


def _body(content: dict[str, Any]) -> str:
    """The stored body: the sentences in the publishing worker's language (the page tells them
    again in its own, from `data`)."""
    parts = wording.sentences(content["counts"])
    median = content["median_time_to_claim_seconds"]
    if median is not None:
        parts.append(wording.median_time_to_claim(median))
    return " ".join(parts)


def hand_over(*, shift: ShiftEntry, occurrence: Occurrence) -> Handover | None:
    """Make the handover of this shift end, once (see the module docstring). None when
    another worker holds it or it was finished already."""
    handover, _created = Handover.objects.get_or_create(
        shift_id=shift.id,
        ends=occurrence.end,
        defaults={
            "warehouse_id": shift.warehouse_id,
            "role_id": shift.role_id,
            "shift_name": shift.name,
            "starts": occurrence.start,
        },
    )
    now = timestamps.now()
    won = (
        Handover.objects.filter(pk=handover.pk, completed_at__isnull=True)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_until=now + LEASE)
    )
    if not won:
        return None
    outgoing = going_off(shift=shift, occurrence=occurrence)
    reading = read_inbox(
        warehouse_id=shift.warehouse_id,
        role_id=shift.role_id,
        occurrence=occurrence,
        outgoing=outgoing,
        now_ms=timestamps.now_ms(),
    )
    released = 0
    if shift.release_claims:
        for notification_id, holder in reading.to_release:
            released += lifecycle.release_by_system(
                warehouse_id=shift.warehouse_id,
                notification_id=notification_id,
                holder_id=holder,
            )
    snoozed = snoozed_by_the_role(shift=shift, occurrence=occurrence)
    content = build_content(reading, released=released, snoozed=snoozed)
    Handover.objects.filter(pk=handover.pk).update(content=content)
    role_name = cache.schedule().role_names.get(shift.role_id, "")
    result = publish(
        message_type=handover_type(),
        warehouse=shift.warehouse_id,
        title=wording.title(shift=shift.name, role=role_name),
        body=_body(content),
        # What the page needs to say it in the reader's language (web/static/web/js/handover.js).
        data={
            "handover_id": handover.pk,
            "shift": shift.name,
            "role": role_name,
            "counts": content["counts"],
        },
        extra_inboxes=[f"r:{shift.role_id}"],
        idempotency_key=f"handover-{handover.pk}",
        idempotency_scope="shifts",
    )
    Handover.objects.filter(pk=handover.pk).update(
        notification_id=result.id, completed_at=timestamps.now(), lease_until=None
    )
    handover.refresh_from_db()
    logger.info(
        "Handover %s of %s: %s (%d pages read)",
        handover.pk,
        shift.name,
        content["counts"],
        reading.pages,
    )
    return handover


def hand_over_due(*, at: dt.datetime | None = None) -> int:
    """Every shift end of the last SHIFT_HANDOVER_LOOKBACK_SECONDS without a finished
    handover gets one (what beat runs); returns how many were made now."""
    with directory_cache.request_scope():  # the directory's version read once per run
        return _hand_over_due(timestamps.now() if at is None else at)


def _hand_over_due(now: dt.datetime) -> int:
    since = now - dt.timedelta(seconds=settings.SHIFT_HANDOVER_LOOKBACK_SECONDS)
    plan: list[tuple[ShiftEntry, Occurrence]] = []
    for warehouse_id, shifts in cache.schedule().by_warehouse.items():
        if not directory_cache.is_active_warehouse(warehouse_id):
            continue
        for shift in shifts:
            plan.extend((shift, o) for o in schedule.ended_between(shift.times, since, now))
    if not plan:
        return 0
    finished = set(
        Handover.objects.filter(ends__gt=since, completed_at__isnull=False).values_list(
            "shift_id", "ends"
        )
    )
    made = 0
    for shift, occurrence in plan:
        if (shift.id, occurrence.end) in finished:
            continue
        try:
            made += hand_over(shift=shift, occurrence=occurrence) is not None
        except Exception:
            # Redis or the database failed for this one: its lease lapses and a later tick
            # finishes it; the other shifts' handovers go ahead.
            logger.exception("Handover of shift %s ending %s failed", shift.id, occurrence.end)
    return made


# --- Accepting ----------------------------------------------------------------------------------


class AlreadyAccepted(Conflict):
    """Someone accepted it first."""


def _resolve_notification(*, user: User, handover: Handover) -> None:
    """An accepted handover is done: its notification is resolved (by the user when they can
    see it, else by the system), so it leaves everyone's open list. Gone already: nothing."""
    if not handover.notification_id:
        return
    try:
        lifecycle.resolve(
            user=user, warehouse_id=handover.warehouse_id, notification_id=handover.notification_id
        )
    except lifecycle.NotVisible:
        lifecycle.resolve_by_system(
            warehouse_id=handover.warehouse_id, notification_id=handover.notification_id
        )


def may_see(*, user: User, handover: Handover) -> bool:
    return bool(user.is_staff) or handover.role_id in directory_cache.role_ids(user)


def accept(*, user: User, handover_id: int) -> Handover:
    """Record that `user` (a member of the handover's role, or staff) accepted it: once, and
    resolve its notification. AlreadyAccepted (409, with the first acceptance) after that."""
    handover = Handover.objects.filter(pk=handover_id).first() if 0 < handover_id < 2**63 else None
    if handover is None or not may_see(user=user, handover=handover):
        raise NotFound(_("No such handover of yours."))
    with transaction.atomic():
        done = Handover.objects.filter(pk=handover.pk, accepted_by__isnull=True).update(
            accepted_by=user, accepted_at=timestamps.now()
        )
    handover.refresh_from_db()
    if done:
        _resolve_notification(user=user, handover=handover)
    if not done:
        holder = handover.accepted_by
        raise AlreadyAccepted(
            _("Already accepted by %(user)s.")
            % {"user": holder.get_username() if holder else _("someone")},
            extra={
                "accepted_by": None
                if holder is None
                else {"id": holder.pk, "username": holder.get_username()},
                "accepted_at": None
                if handover.accepted_at is None
                else timestamps.iso(handover.accepted_at),
            },
        )
    return handover
