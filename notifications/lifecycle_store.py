"""The alert lifecycle in Redis: its reads (due escalations and snoozes, the report, inboxes for
the handover) and the reminders index; its changes are notifications/readmodel/changes.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from config.redis import as_text, get_redis, scored, texts

from . import keys
from .readmodel.changes import (
    Answer,
    Outcome,
    change_by_user,
    escalate,
    history,
    record_event,
    release_held,
    reraise,
    resolve_by_system,
    wake_due,
)
from .readmodel.delivery import FollowUp, run_followups

# The lifecycle's changes live in notifications/readmodel/changes.py (one script each); these
# names stay importable here.
__all__ = [
    "Answer",
    "FollowUp",
    "Outcome",
    "change_by_user",
    "escalate",
    "history",
    "record_event",
    "release_held",
    "reraise",
    "resolve_by_system",
    "run_followups",
    "wake_due",
]


def due_for_escalation(warehouse_id: int, *, now_ms: int, limit: int) -> list[tuple[str, str]]:
    """Up to `limit` (slot, message type code) due for escalation, earliest first."""
    client = get_redis()
    slots = texts(
        client.zrangebyscore(keys.escalations(warehouse_id), "-inf", now_ms, start=0, num=limit)
    )
    if not slots:
        return []
    due = []
    for slot, content in zip(slots, client.hmget(keys.contents(warehouse_id), slots), strict=True):
        # Gone already (expired and swept): "" makes the script drop it from the index.
        due.append((slot, json.loads(content)["message_type"] if content else ""))
    return due


# --- Snoozes --------------------------------------------------------------------------------


def due_snoozes(warehouse_id: int, *, now_ms: int, limit: int) -> list[str]:
    """Up to `limit` snoozes due to wake ("<user id>:<slot>"), earliest first."""
    return texts(
        get_redis().zrangebyscore(keys.snoozes(warehouse_id), "-inf", now_ms, start=0, num=limit)
    )


@dataclass(frozen=True)
class Snoozed:
    """One user's snooze of one alert (the handover's "snoozed past the change")."""

    id: str
    title: str
    severity: str
    status: str
    user_id: int
    until_ms: int


def snoozed_after(warehouse_id: int, *, at_ms: int, limit: int) -> list[Snoozed]:
    """Snoozes waking after `at_ms`, earliest first: at most `limit` index entries read, in two
    round trips (the index, then their contents, states, flags and expiry); those of expired
    or resolved alerts are left out."""
    client = get_redis()
    entries = scored(
        client.zrangebyscore(
            keys.snoozes(warehouse_id), f"({at_ms}", "+inf", start=0, num=limit, withscores=True
        )
    )
    if not entries:
        return []
    slots = [member.split(":", 1)[1] for member, _ in entries]
    pipe = client.pipeline(transaction=False)
    pipe.hmget(keys.contents(warehouse_id), slots)
    pipe.hmget(keys.states(warehouse_id), slots)
    pipe.hmget(keys.flags(warehouse_id), slots)
    for slot in slots:
        pipe.zscore(keys.expiry(warehouse_id), slot)
    replies = pipe.execute()
    contents, states, flags, expiries = replies[0], replies[1], replies[2], replies[3:]
    found = []
    for (member, until), content, state, flag, expires in zip(
        entries, contents, states, flags, expiries, strict=True
    ):
        if content is None or expires is None or float(expires) <= at_ms:
            continue
        lifecycle = json.loads(state) if state else {}
        status = lifecycle.get("status", "open")
        if status == "resolved":
            continue
        note = json.loads(content)
        level = int(as_text(flag)[1:2] or 0) if flag else 0
        found.append(
            Snoozed(
                id=note["id"],
                title=note["title"],
                severity=("info", "warning", "critical")[level],
                status=status,
                user_id=int(member.split(":", 1)[0]),
                until_ms=int(until),
            )
        )
    return found


def severity_levels(warehouse_id: int, slots: Sequence[str]) -> list[int | None]:
    """Each slot's severity level (0 info, 1 warning, 2 critical) from its flags; None when
    it is gone."""
    if not slots:
        return []
    flags = get_redis().hmget(keys.flags(warehouse_id), list(slots))
    return [None if flag is None else int(as_text(flag)[1:2] or 0) for flag in flags]


def type_and_severity(warehouse_id: int, notification_id: str) -> tuple[str, str] | None:
    """The message type code and current severity of a stored notification, or None."""
    redis = get_redis()
    slot = redis.hget(keys.ids(warehouse_id), notification_id)
    if slot is None:
        return None
    content = redis.hget(keys.contents(warehouse_id), slot)
    flag = redis.hget(keys.flags(warehouse_id), slot)
    if content is None:
        return None
    level = int(as_text(flag)[1:2] or 0) if flag else 0
    return json.loads(content)["message_type"], ("info", "warning", "critical")[level]


def postpone_escalation(warehouse_id: int, *, slot: str, until_ms: int) -> bool:
    """Make an escalation due at `until_ms` instead (only if it is still waiting in the index:
    XX, so one escalated or resolved meanwhile is not put back). True when moved."""
    return bool(
        get_redis().zadd(keys.escalations(warehouse_id), {slot: until_ms}, xx=True, ch=True)
    )


@dataclass(frozen=True)
class InboxEntry:
    """One notification of an inbox as stored: its slot, content and raw state (None: never
    changed since publishing), and when it expires (ms)."""

    slot: int
    content: dict
    state: dict | None
    expires_at_ms: int


def inbox_entries_after(
    warehouse_id: int, subscriber: str, *, after_slot: int, count: int
) -> tuple[list[InboxEntry], int | None]:
    """Up to `count` notifications of one inbox with slots after `after_slot`, in slot order:
    one bounded page (ZRANGEBYSCORE ... LIMIT 0 count, then HMGETs of those slots), so a
    caller walks any inbox, however large, with no Redis call growing with its size. Ones
    swept meanwhile are left out; the second value is the last slot read (the next page's
    `after_slot`), None at the end."""
    client = get_redis()
    slots = texts(
        client.zrangebyscore(
            keys.inbox(warehouse_id, subscriber), f"({after_slot}", "+inf", start=0, num=count
        )
    )
    if not slots:
        return [], None
    pipe = client.pipeline(transaction=False)
    pipe.hmget(keys.contents(warehouse_id), slots)
    pipe.hmget(keys.states(warehouse_id), slots)
    pipe.zmscore(keys.expiry(warehouse_id), slots)
    contents, states, expiries = pipe.execute()
    entries = []
    for slot, content, state, expires in zip(slots, contents, states, expiries, strict=True):
        if content is None or expires is None:
            continue
        entries.append(
            InboxEntry(
                slot=int(slot),
                content=json.loads(content),
                state=None if state is None else json.loads(state),
                expires_at_ms=int(expires),
            )
        )
    return entries, int(slots[-1])


# --- The managers' report ----------------------------------------------------------------------


@dataclass(frozen=True)
class DayFigures:
    """What one warehouse kept for one UTC day: counts per (type code, event), and time to
    claim / to resolve samples per type code (ms)."""

    counts: dict[tuple[str, str], int]
    claim_ms: dict[str, list[int]]
    resolve_ms: dict[str, list[int]]


def report_figures(
    warehouse_ids: Sequence[int], days: Sequence[int]
) -> dict[int, list[DayFigures]]:
    """Each warehouse's figures for the given days, in one pipelined round trip.

    The work is bounded by days x warehouses x ALERT_REPORT_MAX_SAMPLES_PER_DAY, however many
    notifications there were (each day's counts are a small hash).
    """
    pipe = get_redis().pipeline(transaction=False)
    for warehouse_id in warehouse_ids:
        for day in days:
            pipe.hgetall(keys.report_counts(warehouse_id, day))
            pipe.lrange(keys.report_durations(warehouse_id, day, "claim"), 0, -1)
            pipe.lrange(keys.report_durations(warehouse_id, day, "resolve"), 0, -1)
    replies = iter(pipe.execute()) if warehouse_ids and days else iter(())
    figures: dict[int, list[DayFigures]] = {}
    for warehouse_id in warehouse_ids:
        figures[warehouse_id] = []
        for _ in days:
            counts, claims, resolves = next(replies), next(replies), next(replies)
            figures[warehouse_id].append(
                DayFigures(
                    counts={
                        tuple(as_text(field).rsplit("|", 1)): int(value)  # type: ignore[misc]
                        for field, value in counts.items()
                    },
                    claim_ms=_samples(claims),
                    resolve_ms=_samples(resolves),
                )
            )
    return figures


@dataclass(frozen=True)
class NoiseDay:
    """What one warehouse kept for one UTC day for the noise report (SPEC 17): counts per
    (type code, event), raises per (UTC hour, route class), each class's inboxes, and how often
    each (type code, alert key) was raised."""

    counts: dict[tuple[str, str], int]
    hours: dict[tuple[int, str], int]
    classes: dict[str, tuple[str, ...]]
    raised_keys: dict[tuple[str, str], int]


def noise_figures(warehouse_ids: Sequence[int], days: Sequence[int]) -> dict[int, list[NoiseDay]]:
    """Each warehouse's noise figures for the given days, in one pipelined round trip of three
    commands per warehouse and day: bounded by the classes of a day (24 hours each) and the
    raised keys kept per day, however many notifications there were."""
    pipe = get_redis().pipeline(transaction=False)
    for warehouse_id in warehouse_ids:
        for day in days:
            pipe.hgetall(keys.report_counts(warehouse_id, day))
            pipe.hgetall(keys.report_noise_hours(warehouse_id, day))
            pipe.zrange(keys.report_raised_keys(warehouse_id, day), 0, -1, withscores=True)
    replies = iter(pipe.execute()) if warehouse_ids and days else iter(())
    figures: dict[int, list[NoiseDay]] = {}
    for warehouse_id in warehouse_ids:
        figures[warehouse_id] = []
        for _ in days:
            counts, noise, raised = next(replies), next(replies), next(replies)
            hours: dict[tuple[int, str], int] = {}
            classes: dict[str, tuple[str, ...]] = {}
            for field, value in noise.items():
                head, _, class_id = as_text(field).partition("|")
                if head == "c":
                    classes[class_id] = tuple(as_text(value).split())
                else:
                    hours[(int(head), class_id)] = int(value)
            figures[warehouse_id].append(
                NoiseDay(
                    counts={
                        tuple(as_text(field).rsplit("|", 1)): int(value)  # type: ignore[misc]
                        for field, value in counts.items()
                    },
                    hours=hours,
                    classes=classes,
                    raised_keys={
                        tuple(as_text(member).split("|", 1)): int(score)  # type: ignore[misc]
                        for member, score in raised
                    },
                )
            )
    return figures


def _samples(entries: list) -> dict[str, list[int]]:
    by_type: dict[str, list[int]] = {}
    for entry in entries:
        type_code, _, ms = as_text(entry).rpartition(" ")
        by_type.setdefault(type_code, []).append(int(ms))
    return by_type


# --- Reminders and e-mails while nobody claims it (SPEC 14) ------------------------------------


def schedule_followups(warehouse_id: int, notification_id: str, due: dict[str, int]) -> None:
    """Index a notification's first reminder ("r0", ms) and its e-mail ("e", ms) in the
    warehouse's reminders zset, in the warehouse's slot (like the escalations index)."""
    if due:
        members = {f"{kind}:{notification_id}": ms for kind, ms in due.items()}
        get_redis().zadd(keys.reminders(warehouse_id), members)


def followups_done(warehouse_id: int, kind: str, notification_ids: Sequence[str]) -> None:
    """Take handed-over entries (e-mails written to the outbox) out of the index, in one call."""
    if notification_ids:
        members = [f"{kind}:{notification_id}" for notification_id in notification_ids]
        get_redis().zrem(keys.reminders(warehouse_id), *members)
