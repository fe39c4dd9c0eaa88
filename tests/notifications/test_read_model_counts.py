"""The counts polls read instead of counting (docs/architecture/read-model.md, "Counting"):
each class's newest open ones and where a poll goes on past them, and the recount a deploy
runs once per warehouse (`manage.py migrate_read_state`), which must give exactly what the
writes keep."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from config.redis import as_text
from notifications import keys, lifecycle, selectors, services
from notifications.readmodel import PRELUDE, upgrade

pytestmark = pytest.mark.django_db

# read_model/ NEWEST: how many of a class's newest open ones it lists.
NEWEST = int(re.findall(r"^local NEWEST = (\d+)$", PRELUDE.text, re.M)[0])


def summary(user, warehouse) -> tuple[int, dict[str, int], list[str]]:
    found = selectors.unread_summary(user=user, warehouse_id=warehouse.pk)
    by_severity = {str(k): v for k, v in found.by_severity.items()}
    return found.unread_count, by_severity, [i.notification.id for i in found.latest]


def test_the_newest_unread_go_on_past_a_classs_listed_ones(warehouse, replenishers, send):
    rita, ralf = replenishers
    notes = [send(title=f"n{i}") for i in range(2 * NEWEST)]
    # Rita reads the newest NEWEST + 6 one by one: the class lists fewer than that.
    services.mark_read(
        user=rita, warehouse_id=warehouse.pk, ids=[n.id for n in notes[-NEWEST - 6 :]]
    )
    left = notes[: NEWEST - 6]
    assert summary(rita, warehouse)[0] == len(left)
    assert summary(rita, warehouse)[2] == [n.id for n in reversed(left)][:5]
    # Ralf claims the newest 20: the class's list runs short and is read again from the index.
    for note in notes[-20:]:
        lifecycle.claim(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)
    open_ones = notes[:-20]
    assert summary(ralf, warehouse)[0] == len(open_ones)
    assert summary(ralf, warehouse)[2] == [n.id for n in reversed(open_ones)][:5]
    assert summary(rita, warehouse)[2] == [n.id for n in reversed(left)][:5]


def _counts_fields(redis, warehouse) -> dict[str, dict[str, str]]:
    """The counts' fields: users "r:...", classes "o:..." / "m:..."."""
    found = {}
    for name, key in (("users", keys.users(warehouse.pk)), ("classes", keys.classes(warehouse.pk))):
        found[name] = {
            as_text(f): as_text(v)
            for f, v in redis.hgetall(key).items()
            if as_text(f)[:2] in ("r:", "o:", "m:")
        }
    return found


@pytest.fixture
def busy_floor(warehouse, replenishers, send, make_user, role, clock):
    """Every kind of read state: marks all, one by one, snoozes, wakes, claims, releases,
    resolves, re-raises, an expired one not yet swept."""
    rita, ralf = replenishers
    sam, dana = make_user("sam", role), make_user("dana", role)
    w = warehouse.pk
    first = [send(title=f"a{i}", severity=("info", "warning", "critical")[i % 3]) for i in range(6)]
    services.mark_read(user=rita, warehouse_id=w, ids=None)
    services.mark_read(user=sam, warehouse_id=w, ids=None)
    later = [send(title=f"b{i}", severity=("critical", "info")[i % 2]) for i in range(5)]
    send(title="short", ttl_seconds=1)
    services.mark_read(user=ralf, warehouse_id=w, ids=[first[0].id, later[1].id, later[2].id])
    soon = clock.now_ms() + 3_600_000
    lifecycle.snooze(user=rita, warehouse_id=w, notification_id=first[1].id, until=soon)
    lifecycle.wake(user=rita, warehouse_id=w, notification_id=first[1].id)
    lifecycle.snooze(user=dana, warehouse_id=w, notification_id=later[3].id, until=soon)
    lifecycle.snooze(user=sam, warehouse_id=w, notification_id=first[2].id, until=soon)
    lifecycle.claim(user=dana, warehouse_id=w, notification_id=first[3].id)
    lifecycle.claim(user=ralf, warehouse_id=w, notification_id=later[0].id)
    lifecycle.release(user=ralf, warehouse_id=w, notification_id=later[0].id)
    lifecycle.resolve(user=sam, warehouse_id=w, notification_id=first[4].id)
    clock.move_by(2_000)  # "short" expired, not swept
    return [rita, ralf, sam, dana]


def test_counting_again_gives_the_counts_the_writes_kept(redis, warehouse, busy_floor):
    users = busy_floor
    before = {u.username: summary(u, warehouse) for u in users}
    fields = _counts_fields(redis, warehouse)
    assert fields["users"]
    assert fields["classes"]
    # The layout before the counts: none of them, and the tallies it kept instead.
    for key, names in ((keys.users(warehouse.pk), fields["users"]),
                       (keys.classes(warehouse.pk), fields["classes"])):  # fmt: skip
        redis.hdel(key, *names)
    redis.hdel(keys.classes(warehouse.pk), "layout")
    redis.hset(
        keys.users(warehouse.pk), mapping={f"o:{users[0].pk}": " x:0", f"o:{users[0].pk}:x:0": 2}
    )
    assert {u.username: summary(u, warehouse) for u in users} != before

    out = io.StringIO()
    call_command("migrate_read_state", stdout=out)

    assert "counted 1 classes and 4 users' tallies" in out.getvalue()
    assert _counts_fields(redis, warehouse) == fields
    assert {u.username: summary(u, warehouse) for u in users} == before
    out = io.StringIO()
    call_command("migrate_read_state", stdout=out)
    assert "counts kept" in out.getvalue()
    upgrade.recount_warehouse(warehouse.pk, again=True)
    assert _counts_fields(redis, warehouse) == fields


def test_a_watermark_of_every_class_becomes_one_per_class(redis, warehouse, replenishers, send):
    rita, _ = replenishers
    notes = [send(title=f"n{i}") for i in range(3)]
    sequence = int(redis.get(keys.sequence(warehouse.pk)))
    newer = send(title="newer")
    redis.hset(keys.users(warehouse.pk), str(rita.pk), str(sequence))  # "*=<sequence>"

    upgrade.recount_warehouse(warehouse.pk, again=True)

    assert summary(rita, warehouse)[0] == 1
    assert summary(rita, warehouse)[2] == [newer.id]
    marks = as_text(redis.hget(keys.users(warehouse.pk), str(rita.pk)))
    assert marks.endswith(f"={sequence}")
    assert "*" not in marks
    # Her watermark is one a change must look at: a release of an old one leaves it read.
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=notes[0].id)
    lifecycle.release(user=rita, warehouse_id=warehouse.pk, notification_id=notes[0].id)
    assert summary(rita, warehouse)[0] == 1
