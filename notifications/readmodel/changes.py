"""The alert lifecycle's changes (SPEC 7, 13): one script per operation, replies by name."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.conf import settings

from config.idempotency import Guard, Replay
from config.redis import as_text

from .. import keys
from ..domain import Actor, Event, HistoryEntry, InboxItem
from . import layout, replies, scripts
from .views import visible_inboxes

DAY_MS = layout.DAY_MS


class Outcome(StrEnum):
    """What a change answered (see each script's header)."""

    OK = "ok"  # changed: the item carries the new cursor
    SAME = "same"  # nothing to change (idempotent)
    MISSING = "missing"  # unknown, expired, or not visible to this user
    TAKEN = "taken"  # claimed by someone else
    RESOLVED = "resolved"  # resolved already
    FORBIDDEN = "forbidden"  # only the claimer may release it
    OTHER_TYPE = "other_type"  # a press: not of a type that has the action (nothing changed)
    UNCLAIMABLE = "unclaimable"  # of a type that is read, not claimed or resolved (unchanged)


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


def report_retention_ms() -> int:
    """How long report counts and durations are kept (one day more than the report can ask)."""
    return (int(settings.ALERT_REPORT_RETENTION_DAYS) + 1) * DAY_MS


def _decode(reply: list[Any], *, replayed: bool = False) -> tuple[Answer, dict[str, Any]]:
    code = Outcome(as_text(reply[0]))
    if code == Outcome.MISSING:
        return Answer(code, replayed=replayed), {}
    values = replies.named(replies.CHANGE, reply)
    return Answer(code, replies.item(values), replayed=replayed), values


# The scripts a user's change runs, by the name lifecycle.py uses; claim, release and resolve
# take an Idempotency-Key.
_BY_USER: dict[str, tuple[scripts.Composed, bool]] = {
    "claim": (scripts.CLAIM, True),
    "release": (scripts.RELEASE, True),
    "resolve": (scripts.RESOLVE, True),
    "snooze": (scripts.SNOOZE, False),
    "wake": (scripts.WAKE, False),
}


def change_by_user(
    op: str,
    *,
    warehouse_id: int,
    notification_id: str,
    actor: Actor,
    role_ids: Sequence[int],
    now_ms: int,
    args: Sequence[object] = (),
    guard: Guard | None = None,
    unclaimable: Collection[str] = (),
) -> Answer:
    """claim, release, resolve, snooze (`args`: when it wakes, ms) or wake by a user who must
    see the notification (own or role inbox). With a `guard` (an Idempotency-Key) the answer
    is recorded with the change, and a request made before gets its first answer (`replayed`)
    and changes nothing. A claim or resolve of a notification of an `unclaimable` type changes
    nothing and answers UNCLAIMABLE."""
    script, guarded = _BY_USER[op]
    own_args: list[object] = [now_ms, notification_id, actor.id, actor.username]
    if op in ("claim", "resolve"):
        own_args += [
            report_retention_ms(),
            settings.ALERT_REPORT_MAX_SAMPLES_PER_DAY,
            " ".join(sorted(unclaimable)),
        ]
    own_args += list(args)
    all_keys = [
        *layout.warehouse_keys(warehouse_id, now_ms),
        *visible_inboxes(warehouse_id, actor.id, role_ids),
    ]
    if not guarded:
        return _decode(script(keys=all_keys, args=own_args))[0]
    active = guard or Guard.none(keys.sequence(warehouse_id))
    reply = script.run(all_keys, own_args, guard=active)
    replay = active.replayed(reply) if guard is not None else None
    if replay is not None:
        return _decode(replay.reply, replayed=True)[0]
    return _decode(reply)[0]


def resolve_by_system(*, warehouse_id: int, notification_id: str, now_ms: int) -> Answer:
    """Resolve without a user (resolved_by null): a rule's condition cleared."""
    reply = scripts.RESOLVE.run(
        layout.warehouse_keys(warehouse_id, now_ms),
        [
            now_ms,
            notification_id,
            "",
            "",
            report_retention_ms(),
            settings.ALERT_REPORT_MAX_SAMPLES_PER_DAY,
            "",  # the system may resolve any type
        ],
        guard=Guard.none(keys.sequence(warehouse_id)),
    )
    return _decode(reply)[0]


def release_held(*, warehouse_id: int, notification_id: str, holder_id: int, now_ms: int) -> Answer:
    """Give back the claim `holder_id` holds (the system, `by` null); SAME when that user no
    longer holds it."""
    reply = scripts.RELEASE_HELD(
        keys=layout.warehouse_keys(warehouse_id, now_ms), args=[now_ms, notification_id, holder_id]
    )
    return _decode(reply)[0]


def escalate(*, warehouse_id: int, slot: str, role_id: int | None, now_ms: int) -> Answer:
    """Escalate one notification due in the escalations index (once: the script removes it).
    Unread again for everyone who sees it: its raise cursor is new, no reader is named."""
    subscriber = "" if role_id is None else f"r:{role_id}"
    inbox = [keys.inbox(warehouse_id, subscriber)] if subscriber else []
    reply = scripts.ESCALATE(
        keys=[*layout.warehouse_keys(warehouse_id, now_ms), *inbox],
        args=[now_ms, slot, subscriber, report_retention_ms()],
    )
    return _decode(reply)[0]


def reraise(
    *, warehouse_id: int, notification_id: str, now_ms: int, silence_id: int | None = None
) -> Answer:
    """Raise an open (or claimed) alert again: occurrences + 1, unread again for everyone
    (an open one held back instead when the planned silence `silence_id` covers it)."""
    reply = scripts.RERAISE(
        keys=layout.warehouse_keys(warehouse_id, now_ms),
        args=[
            now_ms,
            notification_id,
            "" if silence_id is None else silence_id,
            report_retention_ms(),
        ],
    )
    answer, values = _decode(reply)
    if answer.changed:
        return Answer(answer.outcome, answer.item, inboxes=int(values["extra"]))
    return answer


def history(
    *,
    warehouse_id: int,
    notification_id: str,
    actor: Actor,
    role_ids: Sequence[int],
    now_ms: int,
) -> tuple[InboxItem, list[HistoryEntry]] | None:
    """The notification and its events after publishing, or None when the user cannot see it."""
    reply = scripts.HISTORY(
        keys=[
            *layout.warehouse_keys(warehouse_id, now_ms),
            *visible_inboxes(warehouse_id, actor.id, role_ids),
        ],
        args=[now_ms, notification_id, actor.id],
    )
    answer, values = _decode(reply)
    if answer.item is None:
        return None
    raw = as_text(values["extra"] or "")
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


def wake_due(warehouse_id: int, *, entries: Sequence[str], now_ms: int) -> int:
    """Wake these snoozes (from due_snoozes) that are still due, in one call; returns how many
    came back (each with a new cursor, history `woke` by nobody)."""
    if not entries:
        return 0
    reply = scripts.WAKE_DUE(
        keys=layout.warehouse_keys(warehouse_id, now_ms), args=[now_ms, *entries]
    )
    return int(reply[0])


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
    reply = scripts.RECORD_EVENT.run(
        layout.warehouse_keys(warehouse_id, now_ms),
        [now_ms, notification_id, json.dumps(entry, ensure_ascii=False, separators=(",", ":"))],
        guard=active,
        answer=answer,
    )
    replay = active.replayed(reply)
    if replay is not None:
        return replay
    return bool(int(reply[0]))
