"""Redis key names of notifications: the only place that builds them.

All keys of one warehouse share the hash tag `{wh:<id>}` (see subscriptions.keys), so the
fan-out, poll, read and expiry scripts each touch a single Redis Cluster slot. Stored keys
outlive deploys: tests/notifications/test_keys.py pins these exact strings.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings

from config import keyfamilies
from config.idempotency import key_digest
from config.keyspace import events_channel_tag, glob_escape, match_after_prefix
from subscriptions.keys import warehouse_prefix


def sequence(warehouse_id: int) -> str:
    """String: the last cursor given out in the warehouse."""
    return f"{warehouse_prefix(warehouse_id)}:seq"


def inbox(warehouse_id: int, subscriber: str) -> str:
    """Sorted set of a subscriber (`u:<id>` or `r:<id>`): member and score are both the cursor."""
    return f"{warehouse_prefix(warehouse_id)}:inbox:{subscriber}"


def inboxes(warehouse_id: int, subscribers: Iterable[str]) -> list[str]:
    """`inbox()` of each subscriber: a publish names up to thousands, so the warehouse's
    prefix is built once."""
    prefix = warehouse_prefix(warehouse_id)
    return [f"{prefix}:inbox:{subscriber}" for subscriber in subscribers]


def contents(warehouse_id: int) -> str:
    """Hash cursor -> the notification as JSON, stored once however many inboxes it reached."""
    return f"{warehouse_prefix(warehouse_id)}:notes"


def ids(warehouse_id: int) -> str:
    """Hash notification id (UUID) -> cursor, so clients can mark read by id."""
    return f"{warehouse_prefix(warehouse_id)}:ids"


def routes(warehouse_id: int) -> str:
    """Hash cursor -> "<uuid> <subscriber> <subscriber> ...": what the expiry sweep must undo."""
    return f"{warehouse_prefix(warehouse_id)}:routes"


def expiry(warehouse_id: int) -> str:
    """Sorted set cursor -> expires_at in ms: the sweep's index of what to remove when."""
    return f"{warehouse_prefix(warehouse_id)}:expiry"


def idempotency(warehouse_id: int, scope: str, key: str) -> str:
    """String, for IDEMPOTENCY_TTL_SECONDS: the record of a publish, claim, release or resolve
    made with an Idempotency-Key (config/idempotency.py) by `scope` ("u:<user id>", or
    "python"), in the slot of the warehouse it wrote to; the key itself appears only as a
    hash."""
    return f"{warehouse_prefix(warehouse_id)}:idem:{scope}:{key_digest(key)}"


def idempotency_binding(scope: str, key: str) -> str:
    """String, for IDEMPOTENCY_TTL_SECONDS: the fingerprint of the request an Idempotency-Key
    of `scope` was first used for (a publish, claim, release or resolve), in a slot of its own
    (no warehouse's): a key reused in another warehouse finds it (config/idempotency.py)."""
    return f"{settings.WMS_REDIS_PREFIX}:{{idem:{scope}:{key_digest(key)}}}"


# --- The alert lifecycle (SPEC section 7) -------------------------------------------------------
# A notification keeps the cursor it was published with as its identity in every key above
# (its "slot"); a change of status gives it a new cursor through `changes` instead, so a status
# change touches only these per-warehouse keys, never the inboxes.


def flags(warehouse_id: int) -> str:
    """Hash slot -> status letter and severity digit ("o0": open info, "c2": claimed critical,
    "r1": resolved warning): what a poll needs to count unread ones by severity."""
    return f"{warehouse_prefix(warehouse_id)}:flags"


def states(warehouse_id: int) -> str:
    """Hash slot -> the lifecycle as JSON (status, who claimed or resolved it and when,
    escalated_at, severity, occurrences); absent until the first change of status."""
    return f"{warehouse_prefix(warehouse_id)}:states"


def changes(warehouse_id: int) -> str:
    """Sorted set slot -> the cursor of its latest change of status (always above the slot)."""
    return f"{warehouse_prefix(warehouse_id)}:changes"


def history(warehouse_id: int) -> str:
    """Hash slot -> its events after publishing, as comma-separated JSON objects."""
    return f"{warehouse_prefix(warehouse_id)}:history"


def escalations(warehouse_id: int) -> str:
    """Sorted set slot -> ms when it is due for escalation (only types that escalate)."""
    return f"{warehouse_prefix(warehouse_id)}:escalations"


def reminders(warehouse_id: int) -> str:
    """Sorted set -> ms when due: "r<n>:<notification id>" its reminder number n + 1 while
    nobody claims it, "e:<notification id>" its e-mail when nobody claims it (SPEC 14); beat
    pops the due ones by score, in batches (lua/remind.lua)."""
    return f"{warehouse_prefix(warehouse_id)}:reminders"


def claims(warehouse_id: int) -> str:
    """Sorted set notification id -> ms when its claim expires unless there was progress (SPEC
    17: types with claim_timeout_seconds); beat pops the due ones by score, in batches
    (lua/expire_claims.lua)."""
    return f"{warehouse_prefix(warehouse_id)}:claims"


def report_counts(warehouse_id: int, day: int) -> str:
    """Hash "<type code>|<event>" -> count, for one UTC day (days since the epoch)."""
    return f"{warehouse_prefix(warehouse_id)}:report:{int(day)}"


def report_durations(warehouse_id: int, day: int, metric: str) -> str:
    """List of "<type code> <ms>": time to claim (`claim`) or to resolve (`resolve`) of the
    alerts first claimed or resolved on that UTC day."""
    if metric not in ("claim", "resolve"):
        raise ValueError(f"Unknown report metric {metric!r}.")
    return f"{warehouse_prefix(warehouse_id)}:report:{int(day)}:{metric}"


def flaps(warehouse_id: int) -> str:
    """Hash "<type code>|<alert key>" -> "<latest id> <last raise ms> <flapping 0/1> <ms> ...":
    the latest alert a key made, when it last raised, whether it flaps, and when it made each
    new alert within FLAP_WINDOW_SECONDS (SPEC 17; lua/publish.lua). Expires a window after
    its last write: by then every field is stale anyway."""
    return f"{warehouse_prefix(warehouse_id)}:flaps"


def report_noise_hours(warehouse_id: int, day: int) -> str:
    """Hash, for one UTC day (the noise report, SPEC 17): "<hour>|<class>" -> how many raises
    of alerts of that route class reached their inboxes in that UTC hour (0-23), "c|<class>"
    -> the class's inboxes ("u:1 r:2")."""
    return f"{warehouse_prefix(warehouse_id)}:report:{int(day)}:noise"


def report_raised_keys(warehouse_id: int, day: int) -> str:
    """Sorted set "<type code>|<alert key>" -> how often an alert with that key was published
    or raised again on that UTC day (the most raised only; the noise report, SPEC 17)."""
    return f"{warehouse_prefix(warehouse_id)}:report:{int(day)}:keys"


# --- The read model: unread counts kept as things happen (docs/architecture/read-model.md) ---
# A notification's "class" is the set of inboxes it is in (its route): every notification of a
# class is seen by the same users, so counting per class counts each notification once however
# many of a user's inboxes it reached, with the user's roles read at poll time.


def classes(warehouse_id: int) -> str:
    """Hash of route classes: "<class>" -> its inboxes ("u:1 r:2", sorted), "n:<class>" -> how
    many notifications not yet swept are in it, "i:<inbox>" -> the classes the inbox is in."""
    return f"{warehouse_prefix(warehouse_id)}:classes"


def places(warehouse_id: int) -> str:
    """Hash slot -> "<class>:<severity digit>:<raise cursor, 16 digits>": where a notification
    counts. Its raise cursor is its slot, or the cursor of its latest re-raise."""
    return f"{warehouse_prefix(warehouse_id)}:places"


def open_index(warehouse_id: int) -> str:
    """Sorted set (all scores 0, ordered by member): "<place>:<slot>" of every open notification
    not yet swept, so ZLEXCOUNT counts a class's open ones of a severity raised after a cursor."""
    return f"{warehouse_prefix(warehouse_id)}:open"


def users(warehouse_id: int) -> str:
    """Hash of each user's read state of the warehouse as a whole: "<user id>" -> their "mark
    all read" watermarks ("<class>=<cursor> ..."), "v:<user id>" -> their read version (ETags),
    "o:<user id>:<class>:<severity digit>" -> their tally (read model), "o:<user id>" -> the
    tallies they have, "s:<user id>" -> " <slot> ..." they snoozed, "w:<user id>" -> " <slot>
    ..." they woke since their last "mark all read"."""
    return f"{warehouse_prefix(warehouse_id)}:users"


def reads(warehouse_id: int) -> str:
    """Hash of each user's state of one notification: "<user id>:<slot>" -> the raise cursor it
    had when they read it one by one (a later raise outdates it) or "w<cursor>" (woken then);
    "<slot>" -> " <user id> ...": who has such a field or a snooze of it."""
    return f"{warehouse_prefix(warehouse_id)}:reads"


def snoozes(warehouse_id: int) -> str:
    """Sorted set "<user id>:<slot>" -> when that user's snooze of it wakes (ms): beat pops the
    due ones by score, in batches."""
    return f"{warehouse_prefix(warehouse_id)}:snoozes"


def silenced(warehouse_id: int) -> str:
    """Sorted set "<silence id>:<slot>", all scores 0: the alerts a planned silence held back
    (SPEC 17), read by lex range when the silence ends, a bounded batch at a time."""
    return f"{warehouse_prefix(warehouse_id)}:silenced"


# --- Events for open streams (SPEC section 8) ------------------------------------------------
# Every script that gives a notification a cursor (publish, and any status change) PUBLISHes,
# inside the same script, one message on its warehouse's channel:
#
#     "<cursor> <notification id> <subscriber> <subscriber> ..."
#
# the subscribers being the inboxes (`u:<id>`, `r:<id>`) it is in, as in the routes hash. The
# stream reads the content at that cursor and tells each user who sees one of those inboxes.
# A channel is not a key, but it carries the warehouse hash tag anyway: Redis Cluster
# broadcasts PUBLISH to every node, and a sharded SPUBLISH would land on the warehouse's slot.
# publish.lua derives the name from the sequence key (":seq" -> ":events"); a script may as
# well take it in ARGV. tests/notifications/test_events.py pins both.


def events_channel_pattern() -> str:
    """PSUBSCRIBE pattern matching every warehouse's events channel."""
    return f"{settings.WMS_REDIS_PREFIX}:{{wh:*}}:events"


def warehouse_of_channel(channel: str) -> int | None:
    """The warehouse id of an events channel name, None for anything else."""
    digits = events_channel_tag(channel, "wh")
    return int(digits) if digits is not None and digits.isdigit() else None


# --- Finding keys (the orphan sweep) ------------------------------------------------------------
# SCAN patterns, and what a key name SCAN returns says about its owner. Every key of a warehouse
# (the subscription mirror's too) starts with its tag, so a deleted warehouse's keys are found
# whatever their family; within a live warehouse only the families below are told apart.


def every_warehouse_pattern() -> str:
    """SCAN MATCH pattern of every key of every warehouse."""
    return glob_escape(f"{settings.WMS_REDIS_PREFIX}:{{wh:") + "*"


def warehouse_pattern(warehouse_id: int) -> str:
    """SCAN MATCH pattern of every key of one warehouse."""
    return glob_escape(warehouse_prefix(warehouse_id)) + ":*"


@dataclass(frozen=True)
class WarehouseKey:
    """A warehouse key taken apart: `owner` is whose data it is, as far as the sweep cares."""

    warehouse_id: int
    kind: str  # "user", "role", "rule", "type" (config.keyfamilies owners) or "other"
    owner: str = ""  # the user, role or message type id, or the rule id


_WAREHOUSE_KEY = re.compile(r"\{wh:([0-9]{1,19})\}:.*", re.DOTALL)


def parse_warehouse_key(key: str) -> WarehouseKey | None:
    """The warehouse (and owner) of a key under the `{wh:<id>}` tag, else None. Families and
    their owners come from the one registry, config.keyfamilies; a key of no family there is
    "other" (removed only with its warehouse)."""
    found = match_after_prefix(_WAREHOUSE_KEY, key)
    if found is None:
        return None
    parsed = keyfamilies.parse(key)
    if parsed is None or parsed.warehouse_id is None or not parsed.family.owner:
        return WarehouseKey(int(found[1]), "other")
    return WarehouseKey(parsed.warehouse_id, parsed.family.owner, parsed.owner)
