"""Redis key names of notifications: the only place that builds them.

All keys of one warehouse share the hash tag `{wh:<id>}` (see subscriptions.keys), so the
fan-out, poll, read and expiry scripts each touch a single Redis Cluster slot. Stored keys
outlive deploys: tests/notifications/test_keys.py pins these exact strings.
"""

from django.conf import settings

from subscriptions.keys import warehouse_prefix


def sequence(warehouse_id: int) -> str:
    """String: the last cursor given out in the warehouse."""
    return f"{warehouse_prefix(warehouse_id)}:seq"


def inbox(warehouse_id: int, subscriber: str) -> str:
    """Sorted set of a subscriber (`u:<id>` or `r:<id>`): member and score are both the cursor."""
    return f"{warehouse_prefix(warehouse_id)}:inbox:{subscriber}"


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


def read_marks(warehouse_id: int, user_id: int) -> str:
    """Sorted set of cursors a user has read, scored by the notification's expiry in ms."""
    return f"{warehouse_prefix(warehouse_id)}:read:{int(user_id)}"


def readers(warehouse_id: int) -> str:
    """Set of user ids having read marks in the warehouse, so the sweep can find them."""
    return f"{warehouse_prefix(warehouse_id)}:readers"


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


def events_channel(warehouse_id: int) -> str:
    """Pub/sub channel of a warehouse's notification events (new ones and status changes)."""
    return f"{warehouse_prefix(warehouse_id)}:events"


def events_channel_pattern() -> str:
    """PSUBSCRIBE pattern matching every warehouse's events channel."""
    return f"{settings.WMS_REDIS_PREFIX}:{{wh:*}}:events"


def warehouse_of_channel(channel: str) -> int | None:
    """The warehouse id of an events channel name, None for anything else."""
    head = f"{settings.WMS_REDIS_PREFIX}:{{wh:"
    if not (channel.startswith(head) and channel.endswith("}:events")):
        return None
    digits = channel[len(head) : -len("}:events")]
    return int(digits) if digits.isdigit() else None


# --- Rules (notifications.rules): de-duplication and scheduling ---------------------------------
# A rule id is "py:<rule name>" or "sql:<SqlRule pk>" (names match base.RULE_NAME: no braces, so
# they never form a hash tag of their own).


def rule_sent(warehouse_id: int, rule_id: str) -> str:
    """Hash alert key -> ms it was last sent, for one rule in one warehouse (de-duplication)."""
    return f"{warehouse_prefix(warehouse_id)}:rule:{rule_id}:sent"


def rule_lock(rule_id: str) -> str:
    """String: the token of the run holding the rule, so overlapping beat ticks skip it."""
    return f"{settings.WMS_REDIS_PREFIX}:rules:{rule_id}:lock"


def rule_last_runs() -> str:
    """Hash rule id -> ms its last run started: the schedule of Python rules (SQL rules keep
    theirs in the database as `last_run_at`)."""
    return f"{settings.WMS_REDIS_PREFIX}:rules:last_run"
