"""The alert lifecycle in Redis: the only code that runs lua/lifecycle.lua and reads its keys."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from django.conf import settings

from config import idempotency
from config.idempotency import Guard, Replay, guarded
from config.redis import LuaScript, as_text, get_redis, scored, texts

from . import keys
from .domain import Actor, Event, HistoryEntry, InboxItem
from .store import (
    item_from_reply,
    read_model_keys,
    report_day,
    report_retention_ms,
    visible_inboxes,
)

# guarded: it takes an Idempotency-Key's binding and record as its last KEYS and ARGV
# (config/idempotency.py); the changes a user asks for with a key (claim, release, resolve)
# are recorded with it.
_lifecycle = idempotency.guarded(LuaScript.beside(__file__, "lifecycle", prelude="read_model"))


class Outcome(StrEnum):
    """What lua/lifecycle.lua answered (see its header)."""

    OK = "ok"  # changed: the item carries the new cursor
    SAME = "same"  # nothing to change (idempotent)
    MISSING = "missing"  # unknown, expired, or not visible to this user
    TAKEN = "taken"  # claimed by someone else
    RESOLVED = "resolved"  # resolved already
    FORBIDDEN = "forbidden"  # only the claimer may release it
    OTHER_TYPE = "other_type"  # a press: not of a type that has the action (nothing changed)


@dataclass(frozen=True)
class Answer:
    outcome: Outcome
    item: InboxItem | None = None  # None when MISSING
    inboxes: int = 0  # reraise: how many inboxes it is in
    # True when an Idempotency-Key found this request made before: this is the first answer,
    # and nothing was changed now.
    replayed: bool = False

    @property
    def changed(self) -> bool:
        return self.outcome == Outcome.OK


class StaleReaders(RuntimeError):
    """The warehouse's readers kept changing while re-raising (retries exhausted)."""


def _fixed_keys(warehouse_id: int, now_ms: int, actor_id: int | None) -> list[str]:
    day = report_day(now_ms)
    return [
        keys.sequence(warehouse_id),
        keys.contents(warehouse_id),
        keys.ids(warehouse_id),
        keys.routes(warehouse_id),
        keys.expiry(warehouse_id),
        keys.flags(warehouse_id),
        keys.states(warehouse_id),
        keys.changes(warehouse_id),
        keys.history(warehouse_id),
        keys.escalations(warehouse_id),
        keys.report_counts(warehouse_id, day),
        keys.report_durations(warehouse_id, day, "claim"),
        keys.report_durations(warehouse_id, day, "resolve"),
        # The system has no read marks; the key is declared (same slot) but never written.
        keys.read_marks(warehouse_id, actor_id or 0),
        keys.readers(warehouse_id),
        *read_model_keys(warehouse_id),
        keys.snoozes(warehouse_id),
        keys.snoozers(warehouse_id),
    ]


def _call(
    op: str,
    *,
    warehouse_id: int,
    target: str,
    now_ms: int,
    actor: Actor | None,
    extra_keys: Sequence[str] = (),
    extra_args: Sequence[object] = (),
    guard: idempotency.Guard | None = None,
) -> list:
    guard = guard or idempotency.Guard.none(keys.sequence(warehouse_id))
    return _lifecycle(
        keys=[
            *_fixed_keys(warehouse_id, now_ms, actor.id if actor else None),
            *extra_keys,
            *guard.script_keys(),
        ],
        args=[
            op,
            now_ms,
            target,
            "" if actor is None else actor.id,
            "" if actor is None else actor.username,
            report_retention_ms(),
            settings.ALERT_REPORT_MAX_SAMPLES_PER_DAY,
            *extra_args,
            guard.arg(),
        ],
    )


def _answer(reply: list, *, replayed: bool = False) -> Answer:
    outcome = Outcome(as_text(reply[0]))
    if outcome == Outcome.MISSING:
        return Answer(outcome, replayed=replayed)
    snoozed = reply[6] if len(reply) > 6 else None
    return Answer(
        outcome,
        item_from_reply(reply[1], reply[2], bool(int(reply[5])), reply[3], snoozed),
        replayed=replayed,
    )


def change_by_user(
    op: str,
    *,
    warehouse_id: int,
    notification_id: str,
    actor: Actor,
    role_ids: Sequence[int],
    now_ms: int,
    args: Sequence[object] = (),
    guard: idempotency.Guard | None = None,
) -> Answer:
    """claim, release, resolve, snooze (`args`: when it wakes, ms) or wake by a user who must
    see the notification (own or role inbox). With a `guard` (an Idempotency-Key) the answer
    is recorded with the change, and a request made before gets its first answer (`replayed`)
    and changes nothing."""
    reply = _call(
        op,
        warehouse_id=warehouse_id,
        target=notification_id,
        now_ms=now_ms,
        actor=actor,
        extra_keys=visible_inboxes(warehouse_id, actor.id, role_ids),
        extra_args=args,
        guard=guard,
    )
    replay = None if guard is None else guard.replayed(reply)
    if replay is not None:
        return _answer(replay.reply, replayed=True)
    return _answer(reply)


def resolve_by_system(*, warehouse_id: int, notification_id: str, now_ms: int) -> Answer:
    """Resolve without a user (resolved_by null): a rule's condition cleared."""
    reply = _call(
        "resolve", warehouse_id=warehouse_id, target=notification_id, now_ms=now_ms, actor=None
    )
    return _answer(reply)


def release_held(*, warehouse_id: int, notification_id: str, holder_id: int, now_ms: int) -> Answer:
    """Give back the claim `holder_id` holds (the system, `by` null); SAME when that user no
    longer holds it."""
    reply = _call(
        "release_held",
        warehouse_id=warehouse_id,
        target=notification_id,
        now_ms=now_ms,
        actor=None,
        extra_args=[holder_id],
    )
    return _answer(reply)


def escalate(*, warehouse_id: int, slot: str, role_id: int | None, now_ms: int) -> Answer:
    """Escalate one notification due in the escalations index (once: the script removes it).

    An escalated alert is unread again for everyone who sees it, so every reader's read marks
    key is declared, as for a re-raise.
    """
    subscriber = "" if role_id is None else f"r:{role_id}"
    inbox = [keys.inbox(warehouse_id, subscriber)] if subscriber else []
    reply = _with_readers(
        "escalate",
        warehouse_id=warehouse_id,
        target=slot,
        now_ms=now_ms,
        first_keys=inbox,
        first_args=[subscriber],
    )
    return _answer(reply)


def reraise(*, warehouse_id: int, notification_id: str, now_ms: int) -> Answer:
    """Raise an open (or claimed) alert again: occurrences + 1, unread again for everyone."""
    reply = _with_readers(
        "reraise", warehouse_id=warehouse_id, target=notification_id, now_ms=now_ms
    )
    answer = _answer(reply)
    if answer.changed:
        return Answer(answer.outcome, answer.item, inboxes=int(reply[4]))
    return answer


def _with_readers(
    op: str,
    *,
    warehouse_id: int,
    target: str,
    now_ms: int,
    first_keys: Sequence[str] = (),
    first_args: Sequence[object] = (),
    attempts: int = 5,
) -> list:
    """A system change that drops every reader's marks: the readers set is read first and the
    script checks it is still the same (retrying with the current one when it is not)."""
    readers = texts(get_redis().smembers(keys.readers(warehouse_id)))
    for _ in range(attempts):
        reply = _call(
            op,
            warehouse_id=warehouse_id,
            target=target,
            now_ms=now_ms,
            actor=None,
            extra_keys=[*first_keys, *(keys.read_marks(warehouse_id, int(r)) for r in readers)],
            extra_args=[*first_args, *readers],
        )
        if as_text(reply[0]) != "readers":
            return reply
        readers = [as_text(m) for m in reply[1:]]
    raise StaleReaders(f"Readers of warehouse {warehouse_id} changed {attempts} times.")


def history(
    *,
    warehouse_id: int,
    notification_id: str,
    actor: Actor,
    role_ids: Sequence[int],
    now_ms: int,
) -> tuple[InboxItem, list[HistoryEntry]] | None:
    """The notification and its events after publishing, or None when the user cannot see it."""
    reply = _call(
        "history",
        warehouse_id=warehouse_id,
        target=notification_id,
        now_ms=now_ms,
        actor=actor,
        extra_keys=visible_inboxes(warehouse_id, actor.id, role_ids),
    )
    answer = _answer(reply)
    if answer.item is None:
        return None
    raw = as_text(reply[4] or "")
    events = json.loads(f"[{raw}]") if raw else []
    return answer.item, [
        HistoryEntry(
            Event(e["event"]),
            int(e["at"]),
            Actor.from_json(e.get("by")),
            None if e.get("until") is None else int(e["until"]),
            None if e.get("code") is None else str(e["code"]),
            None if e.get("recipients") is None else int(e["recipients"]),
        )
        for e in events
    ]


_record_event = guarded(LuaScript.beside(__file__, "record_event"))


def record_event(
    *,
    warehouse_id: int,
    notification_id: str,
    event: Event,
    now_ms: int,
    actor: Actor | None,
    extra: dict[str, object] | None = None,
    guard: Guard | None = None,
    answer: str = "",
) -> Replay | bool:
    """Add an event to a notification's history (lua/record_event.lua), nothing else: True
    when recorded, False when the notification is gone (unknown or expired). With a `guard`
    (an Idempotency-Key record, config/idempotency.py), an event recorded before under it is
    not recorded again: its Replay is returned instead (KeyReused for another request);
    `answer` (one line) is what the replay gives back."""
    entry: dict[str, object] = {
        "event": str(event),
        "at": now_ms,
        "by": None if actor is None else {"id": actor.id, "username": actor.username},
        **(extra or {}),
    }
    active = guard or Guard.none(keys.history(warehouse_id))
    reply = _record_event(
        keys=[
            keys.ids(warehouse_id),
            keys.expiry(warehouse_id),
            keys.history(warehouse_id),
            *active.script_keys(),
        ],
        args=[
            notification_id,
            now_ms,
            json.dumps(entry, ensure_ascii=False, separators=(",", ":")),
            active.arg(answer),
        ],
    )
    replay = active.replayed(reply)
    if replay is not None:
        return replay
    return bool(int(reply[0]))


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


def wake_due(warehouse_id: int, *, entries: Sequence[str], now_ms: int) -> int:
    """Wake these snoozes (from due_snoozes) that are still due, in one call; returns how many
    came back (each with a new cursor, history `woke` by nobody)."""
    if not entries:
        return 0
    reply = _call(
        "wake_due",
        warehouse_id=warehouse_id,
        target="",
        now_ms=now_ms,
        actor=None,
        extra_args=entries,
    )
    return int(reply[0])


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


def _samples(entries: list) -> dict[str, list[int]]:
    by_type: dict[str, list[int]] = {}
    for entry in entries:
        type_code, _, ms = as_text(entry).rpartition(" ")
        by_type.setdefault(type_code, []).append(int(ms))
    return by_type


# --- Reminders and e-mails while nobody claims it (SPEC 14) ------------------------------------

_remind = LuaScript.beside(__file__, "remind")


def schedule_followups(warehouse_id: int, notification_id: str, due: dict[str, int]) -> None:
    """Index a notification's first reminder ("r0", ms) and its e-mail ("e", ms) in the
    warehouse's reminders zset, in the warehouse's slot (like the escalations index)."""
    if due:
        members = {f"{kind}:{notification_id}": ms for kind, ms in due.items()}
        get_redis().zadd(keys.reminders(warehouse_id), members)


@dataclass(frozen=True)
class FollowUp:
    """A due reminder that was sent ("r") or an e-mail to hand over ("e"), of an open alert."""

    kind: str
    notification_id: str
    content: dict
    state: dict | None
    inboxes: tuple[str, ...]


def run_followups(
    warehouse_id: int, *, now_ms: int, limit: int, lease_ms: int, rules: dict[str, list[int]]
) -> tuple[int, list[FollowUp]]:
    """One call of lua/remind.lua over at most `limit` due entries: how many it read (fewer than
    `limit`: nothing more is due), and the reminders it sent and e-mails it hands over."""
    reply = _remind(
        keys=[
            keys.reminders(warehouse_id),
            keys.ids(warehouse_id),
            keys.contents(warehouse_id),
            keys.expiry(warehouse_id),
            keys.flags(warehouse_id),
            keys.states(warehouse_id),
            keys.history(warehouse_id),
            keys.routes(warehouse_id),
            keys.snoozers(warehouse_id),
            keys.changes(warehouse_id),
            keys.sequence(warehouse_id),
        ],
        args=[now_ms, limit, lease_ms, json.dumps(rules)],
    )
    found = [
        FollowUp(
            kind=as_text(kind),
            notification_id=as_text(notification_id),
            content=json.loads(content),
            state=json.loads(state) if state else None,
            inboxes=tuple(as_text(route).split()[1:]),
        )
        for kind, notification_id, content, state, route in reply[1:]
    ]
    return int(reply[0]), found


def followup_done(warehouse_id: int, kind: str, notification_id: str) -> None:
    """Take a handed-over entry (an e-mail written to the outbox) out of the index."""
    get_redis().zrem(keys.reminders(warehouse_id), f"{kind}:{notification_id}")
