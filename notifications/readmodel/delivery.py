"""Publishing, the expiry sweep, live events, reminders and forgetting a user: the read-model
scripts that are not one user's view or a change of status."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from config.idempotency import Guard
from config.redis import Batch, as_text

from .. import keys
from . import layout, scripts
from .replies import PublishReply, publish_reply


def publish(
    *,
    warehouse_id: int,
    subscriber_keys: tuple[str, str],
    subscribers: Sequence[str],
    token: str,
    now_ms: int,
    args: Sequence[Any],
    version: tuple[str, str],
    guard: Guard,
    answer: str,
) -> PublishReply:
    """One call of lua/publish.lua (its header names `args`: ARGV[3..14]; ARGV[15], the route, is
    `subscribers` joined), its reply decoded."""
    reply = scripts.PUBLISH.run(
        [
            *layout.warehouse_keys(warehouse_id, now_ms),
            *subscriber_keys,
            keys.flaps(warehouse_id),
            *keys.inboxes(warehouse_id, subscribers),
        ],
        [now_ms, token, *args, " ".join(subscribers)],
        guard=guard,
        answer=answer,
        version=version,
    )
    return publish_reply(reply, guard)


def remove_expired(
    warehouse_id: int,
    *,
    finished: Sequence[tuple[str, str]],
    removals: Sequence[tuple[str, str]],
    now_ms: int,
) -> tuple[int, int, int]:
    """Remove inbox entries (subscriber, cursor) and then finished notifications (cursor, id);
    returns the inbox entries, notifications and users' read fields removed."""
    reply = scripts.EXPIRE(
        keys=[
            *layout.warehouse_keys(warehouse_id, now_ms),
            *keys.inboxes(warehouse_id, [subscriber for subscriber, _ in removals]),
        ],
        args=[
            now_ms,
            len(finished),
            *(c for c, _ in finished),
            *(i for _, i in finished),
            *(cursor for _, cursor in removals),
        ],
    )
    return int(reply[0]), int(reply[1]), int(reply[2])


def forget_reader(batch: Batch, warehouse_id: int, user_id: int, now_ms: int) -> None:
    """Queue lua/forget_reader.lua for a deleted user (their read state in the warehouse)."""
    batch.script(
        scripts.FORGET_READER,
        keys=layout.warehouse_keys(warehouse_id, now_ms),
        args=[now_ms, user_id],
    )


class EventView(NamedTuple):
    """One notification event as lua/event_read_state.lua found it."""

    content: Any
    state: Any  # lifecycle JSON, None when never changed
    read_by: frozenset[int]  # the users (of those asked about) it is read for
    # The users (of those asked about) it came quietly to (SPEC 17 noise budget).
    quiet_to: frozenset[int] = frozenset()
    # The users (of those asked about) to tell loudly now (read_model/ to_tell); empty
    # unless asked for (`tell`).
    to_tell: frozenset[int] = frozenset()


def event_read_state_call(
    warehouse_id: int,
    notification_id: str,
    now_ms: int,
    users: Sequence[tuple[int, Iterable[str]]],
    *,
    budget: int,
    tell: bool = False,
) -> tuple[list[str], list[Any]]:
    """The keys and arguments of EVENT_READ_STATE for these users, each with the inboxes they
    see in the warehouse ("u:7", "r:2"), under a noise budget of `budget` alerts per hour (0:
    off); `tell`: also ask whom of them to tell loudly (a reminder). The warehouse's layout:
    no key per user."""
    return list(layout.warehouse_keys(warehouse_id, now_ms)), [
        now_ms,
        notification_id,
        "tell" if tell else "",
        int(budget),
        *(" ".join([str(int(user_id)), *sorted(inboxes)]) for user_id, inboxes in users),
    ]


def event_view(reply: list[Any], user_ids: Sequence[int]) -> EventView | None:
    """EVENT_READ_STATE's reply for `user_ids` (as passed, in order); None when the
    notification is gone."""
    content, *rest = reply
    if content is None:
        return None
    state, read_at, quiet_at, tell_at = rest

    def users_at(positions: list[Any]) -> frozenset[int]:
        return frozenset(user_ids[int(p) - 1] for p in positions)

    return EventView(
        content, state or None, users_at(read_at), users_at(quiet_at), users_at(tell_at)
    )


class FollowUp(NamedTuple):
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
    reply = scripts.REMIND(
        keys=layout.warehouse_keys(warehouse_id, now_ms),
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
