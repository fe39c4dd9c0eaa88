"""The peer's notifications, loaded with SQL: a million rows in seconds, not through `notify`.

Users (none of them staff):

- `peer-big`: `big` unread notifications (10,000);
- `peer-small`: `small` unread (20);
- `peer-other-0000` … `peer-other-0999`: 1,000 unread each, the rest of the table (1,000,000).

Each row is what the peer's `notify.send(user, recipient=user, verb=…, description=…,
data=…)` writes: the actor is the recipient (a generic foreign key to auth.User), no target
and no action object. The same title, body and data as the project's notifications in
benchmarks/inbox_data.py. Every user's notifications are spread evenly over the same span
(`big` seconds back from now), so the newest ones of any user are as mixed with everyone
else's as in a table filled over time (the peer's list reads them by `-timestamp`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection, transaction

OTHERS = 1000  # users besides the two measured ones
EACH = 1000  # notifications of each of them
BATCH = 100  # other users per INSERT: a progress line every 100,000 rows
# Kept on `peer-big` (its last name): a database loaded by an older layout is loaded again.
LAYOUT = "layout 2: every user's notifications over the same span"

VERB = "Replenish A-01-03"
DESCRIPTION = "Stock is -12 after wave 8812"
DATA = json.dumps({"bin": "A-01-03", "qty": -12})

# `n` numbers a user's notifications 1..count, `step` seconds apart; users are chosen by id
# range and name pattern.
INSERT = {
    "postgresql": (
        "INSERT INTO notifications_notification (level, unread, actor_content_type_id, "
        "actor_object_id, verb, description, public, deleted, emailed, data, timestamp, "
        "recipient_id) "
        "SELECT 'info', true, %(actor_type)s, u.id::text, %(verb)s, %(description)s, true, "
        "false, false, %(data)s, now() - make_interval(secs => s.n * %(step)s), u.id "
        "FROM auth_user u CROSS JOIN generate_series(1, %(count)s) AS s(n) "
        "WHERE u.id BETWEEN %(low)s AND %(high)s AND u.username LIKE %(names)s"
    ),
    "sqlite": (
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < %(count)s) "
        "INSERT INTO notifications_notification (level, unread, actor_content_type_id, "
        "actor_object_id, verb, description, public, deleted, emailed, data, timestamp, "
        "recipient_id) "
        "SELECT 'info', 1, %(actor_type)s, CAST(u.id AS TEXT), %(verb)s, %(description)s, 1, "
        "0, 0, %(data)s, datetime('now', '-' || (s.n * %(step)s) || ' seconds'), u.id "
        "FROM auth_user u CROSS JOIN s "
        "WHERE u.id BETWEEN %(low)s AND %(high)s AND u.username LIKE %(names)s"
    ),
}


def expected_rows(big: int, small: int) -> int:
    return big + small + OTHERS * EACH


def _unread(username: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM notifications_notification n "
            "JOIN auth_user u ON u.id = n.recipient_id WHERE u.username = %s AND n.unread",
            [username],
        )
        return int(cursor.fetchone()[0])


def is_loaded(big: int, small: int) -> bool:
    """Whether the table holds exactly this configuration's data (a cut-short load does not)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notifications_notification")
        total = int(cursor.fetchone()[0])
    return (
        User.objects.filter(username="peer-big", last_name=LAYOUT).exists()
        and total == expected_rows(big, small)
        and _unread("peer-big") == big
        and _unread("peer-small") == small
    )


def _insert(users: list[User], names: str, count: int, span: int) -> None:
    ids = [u.pk for u in users]
    params = {
        "actor_type": ContentType.objects.get_for_model(User).pk,
        "verb": VERB,
        "description": DESCRIPTION,
        "data": DATA,
        "count": count,
        "step": max(1, span // count),
        "low": min(ids),
        "high": max(ids),
        "names": names,
    }
    with connection.cursor() as cursor:
        cursor.execute(INSERT[connection.vendor], params)


def load(big: int, small: int, say: Callable[[str], None]) -> None:
    """Empty the database and load this configuration's users and notifications."""
    total = expected_rows(big, small)
    say(f"loading {total:,} notifications into the peer's {connection.vendor} database")
    # Every table emptied (the peer site holds nothing else); content types come back at once.
    call_command("flush", interactive=False, verbosity=0)
    password = make_password(None)  # unusable: the benchmark logs its users in by session
    with transaction.atomic():
        measured = User.objects.bulk_create(
            [
                User(username="peer-big", password=password, last_name=LAYOUT),
                User(username="peer-small", password=password),
            ]
        )
        others = User.objects.bulk_create(
            User(username=f"peer-other-{i:04d}", password=password) for i in range(OTHERS)
        )
        others.sort(key=lambda u: u.pk)
        _insert(measured[:1], "peer-big", big, big)
        _insert(measured[1:], "peer-small", small, big)
        done = big + small
        for start in range(0, OTHERS, BATCH):
            _insert(others[start : start + BATCH], "peer-other-%", EACH, big)
            done += BATCH * EACH
            say(f"{done:,} / {total:,} rows")
    # Fresh statistics (and on PostgreSQL a visibility map, for index-only counts), as the
    # autovacuum of a table that has been in use for a while would have left them.
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("VACUUM ANALYZE notifications_notification")
        else:
            cursor.execute("ANALYZE")
