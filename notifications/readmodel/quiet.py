"""SPEC 17's quiet floor in the read model: waking what a planned silence held back, a user's
mute (the users hash, field "q:<user>"), and who is told loudly of an alert (lua/attention.lua).
The rules themselves are the prelude's (lua/read_model/, "Silences and mutes")."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from config.redis import as_text, get_redis

from .. import keys
from ..domain import Notification
from . import layout, scripts
from .changes import report_retention_ms


@dataclass(frozen=True)
class Woken:
    """One call of lua/unsilence.lua: how many entries it took, whether more are waiting, and
    the alerts it delivered again (each with the inboxes of its route)."""

    taken: int
    more: bool
    alerts: tuple[tuple[Notification, tuple[str, ...]], ...]


def unsilence(
    *,
    warehouse_id: int,
    silence_id: int,
    now_ms: int,
    most: int,
    escalation_delays_ms: Mapping[str, int],
) -> Woken:
    """Wake at most `most` of what the silence held back (the caller calls again while `more`)."""
    reply = scripts.UNSILENCE(
        keys=layout.warehouse_keys(warehouse_id, now_ms),
        args=[
            now_ms,
            silence_id,
            most,
            json.dumps(dict(escalation_delays_ms)),
            report_retention_ms(),
        ],
    )
    alerts = []
    for _id, content, route in reply[2:]:
        inboxes = tuple(as_text(route).split()[1:])
        alerts.append((Notification.from_json(content), inboxes))
    return Woken(int(reply[0]), bool(int(reply[1])), tuple(alerts))


def to_tell(
    *,
    warehouse_id: int,
    notification_id: str,
    users: Sequence[tuple[int, Sequence[str]]],
    now_ms: int,
    budget: int,
) -> set[int]:
    """Of these users (each with the inboxes they see in the warehouse: "u:7", "r:2"), those
    to tell loudly of the alert now (pushed, reminded): the prelude's rule (lua/read_model/
    to_tell), under a noise budget of `budget` alerts per hour (0: off)."""
    if not users:
        return set()
    reply = scripts.ATTENTION(
        keys=layout.warehouse_keys(warehouse_id, now_ms),
        args=[
            now_ms,
            notification_id,
            budget,
            *(" ".join([str(int(user_id)), *inboxes]) for user_id, inboxes in users),
        ],
    )
    return {int(as_text(u)) for u in reply}


@dataclass(frozen=True)
class Mute:
    """A user's mute of a warehouse: alerts below `below` (a severity level) are not unread for
    them until `until_ms`."""

    until_ms: int
    below: int


def _field(user_id: int) -> str:
    return f"q:{int(user_id)}"


def mute_set(*, warehouse_id: int, user_id: int, until_ms: int, below: int) -> Mute:
    """Mute (or move the mute); the user's read version moves on, so their ETags do."""
    pipe = get_redis().pipeline(transaction=True)
    pipe.hset(keys.users(warehouse_id), _field(user_id), f"{int(until_ms)} {int(below)}")
    pipe.hincrby(keys.users(warehouse_id), f"v:{int(user_id)}", 1)
    pipe.execute()
    return Mute(int(until_ms), int(below))


def mute_of(*, warehouse_id: int, user_id: int, now_ms: int) -> Mute | None:
    """The user's active mute of the warehouse, or None."""
    raw = get_redis().hget(keys.users(warehouse_id), _field(user_id))
    if raw is None:
        return None
    until, below = as_text(raw).split()
    if int(until) <= now_ms:
        return None
    return Mute(int(until), int(below))


def mute_end(*, warehouse_id: int, user_id: int) -> bool:
    """End the user's mute; False when there was none."""
    pipe = get_redis().pipeline(transaction=True)
    pipe.hdel(keys.users(warehouse_id), _field(user_id))
    pipe.hincrby(keys.users(warehouse_id), f"v:{int(user_id)}", 1)
    ended, _ = pipe.execute()
    return bool(ended)
