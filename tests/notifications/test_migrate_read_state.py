"""`manage.py migrate_read_state`: read state written in the layout before the read model's
package (watermarks, read:<user id>, snoozers) is moved into it, and the counts, pages and
snoozed lists after the move are those of users who did the same in the new layout."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from config import timestamps
from config.redis import as_text
from notifications import keys, lifecycle, selectors, services
from notifications.readmodel import upgrade

pytestmark = pytest.mark.django_db(transaction=True)

HOUR_MS = 3_600_000


def migrate() -> str:
    out = io.StringIO()
    call_command("migrate_read_state", stdout=out)
    return out.getvalue()


def slot_of(redis, warehouse, note) -> str:
    return as_text(redis.hget(keys.ids(warehouse.pk), note.id))


def unread(user, warehouse) -> int:
    return selectors.unread_summary(user=user, warehouse_id=warehouse.pk).unread_count


def read_ids(user, warehouse) -> set[str]:
    page = selectors.inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True)
    return {item.notification.id for item in page.items if item.read}


@pytest.fixture
def crew(replenishers, role, make_user):
    rita, ralf = replenishers
    return rita, ralf, make_user("sam", role), make_user("dana", role)


def test_old_read_state_reads_as_the_same_state_made_in_the_new_layout(
    redis, warehouse, crew, send
):
    rita, ralf, sam, dana = crew
    first, second, third = send(title="one"), send(title="two"), send(title="three")
    w = warehouse.pk
    slots = [slot_of(redis, warehouse, n) for n in (first, second, third)]
    place = as_text(redis.hget(keys.places(w), slots[0]))
    klass = place.split(":")[0]
    wakes = timestamps.now_ms() + HOUR_MS
    # The old layout: rita marked all read, ralf read the first one by one, sam snoozed the
    # second; the derived hashes are there too.
    redis.hset(upgrade.old_key(w, "watermarks"), mapping={
        str(rita.pk): f"{klass}={int(redis.get(keys.sequence(w)))}", f"v:{rita.pk}": 3,
    })  # fmt: skip
    redis.zadd(upgrade.old_read_marks(w, ralf.pk), {slots[0]: wakes})
    redis.sadd(upgrade.old_key(w, "readers"), ralf.pk)
    redis.zadd(keys.snoozes(w), {f"{sam.pk}:{slots[1]}": wakes})
    redis.hset(upgrade.old_key(w, "snoozers"), mapping={
        f"u:{sam.pk}": f" {slots[1]}", slots[1]: f" {sam.pk}",
    })  # fmt: skip
    redis.hset(upgrade.old_key(w, "markers"), slots[0], f" {ralf.pk}")
    redis.hset(upgrade.old_key(w, "readopen"), f"{ralf.pk}:{klass}:0", 1)
    assert unread(rita, warehouse) == 3  # before the move the new layout knows nothing of it

    output = migrate()

    assert "SH01: 3 users: 1 mark-all states, 1 read marks, 1 snoozes moved" in output
    # dana does in the new layout what the others did in the old one.
    services.mark_read(user=dana, warehouse_id=w, ids=None)
    assert (unread(rita, warehouse), unread(dana, warehouse)) == (0, 0)
    services.mark_read(user=dana, warehouse_id=w, ids=[first.id])
    assert read_ids(rita, warehouse) == read_ids(dana, warehouse) == {first.id, second.id, third.id}
    assert (unread(ralf, warehouse), read_ids(ralf, warehouse)) == (2, {first.id})
    assert unread(sam, warehouse) == 2
    assert [i.notification.id for i in selectors.snoozed(user=sam, warehouse_id=w)] == [second.id]
    # The moved snooze wakes as one made now would: unread again, counted again.
    lifecycle.wake(user=sam, warehouse_id=w, notification_id=second.id)
    assert unread(sam, warehouse) == 3
    assert not any(
        redis.exists(k)
        for k in (
            *(upgrade.old_key(w, name) for name in (*upgrade.OLD_HASHES, upgrade.OLD_READERS)),
            upgrade.old_read_marks(w, ralf.pk),
        )
    )
    assert "SH01: 0 users" in migrate()


def test_new_state_made_before_the_move_wins_over_old_watermarks(redis, warehouse, crew, send):
    rita, *_ = crew
    note = send(title="one")
    w = warehouse.pk
    redis.hset(upgrade.old_key(w, "watermarks"), str(rita.pk), "*=1")
    later = send(title="two")
    services.mark_read(user=rita, warehouse_id=w, ids=None)  # in the new layout already
    newer = send(title="three")

    output = migrate()

    assert "1 users: 0 mark-all states" in output
    assert "1 kept their new state" in output
    assert read_ids(rita, warehouse) == {note.id, later.id}
    assert unread(rita, warehouse) == 1
    assert newer.id not in read_ids(rita, warehouse)


def test_read_marks_move_in_batches_and_skip_expired_ones(redis, warehouse, crew, send):
    _, ralf, *_ = crew
    w = warehouse.pk
    notes = [send(title=f"n{i}") for i in range(7)]
    marks = {slot_of(redis, warehouse, n): 1 for n in notes[:5]}
    marks["999999"] = 1  # gone long ago
    redis.zadd(upgrade.old_read_marks(w, ralf.pk), marks)
    redis.sadd(upgrade.old_key(w, "readers"), ralf.pk)

    out = io.StringIO()
    call_command("migrate_read_state", "--batch", "2", stdout=out)

    assert "1 users: 0 mark-all states, 5 read marks" in out.getvalue()
    assert read_ids(ralf, warehouse) == {n.id for n in notes[:5]}
    assert unread(ralf, warehouse) == 2
