"""shifts.selectors: who is on shift, the next start of a user's shift, from a per-process
schedule that a change of shifts, time zones or memberships replaces at once."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from shifts import selectors
from shifts.models import Shift

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_schedule")]

UTC = dt.UTC
# A Wednesday in winter: Europe/Berlin is UTC+1.
NOON = dt.datetime(2026, 1, 14, 11, 0, tzinfo=UTC)  # 12:00 in Berlin


@pytest.fixture
def berlin(warehouse):
    warehouse.timezone = "Europe/Berlin"
    warehouse.save()
    return warehouse


@pytest.fixture
def night_role(db):
    return Group.objects.create(name="Night team")


def shift(warehouse, role, starts, ends, weekdays=(), name="Shift") -> Shift:
    return Shift.objects.create(
        warehouse=warehouse,
        role=role,
        name=name,
        starts=dt.time.fromisoformat(starts),
        ends=dt.time.fromisoformat(ends),
        weekdays=list(weekdays),
    )


def test_next_shift_start_is_the_earliest_of_the_users_roles(berlin, role, night_role, make_user):
    shift(berlin, role, "06:00", "14:00", name="Early")
    shift(berlin, night_role, "22:00", "06:00", name="Night")
    alice = make_user("alice", role, night_role)
    bob = make_user("bob", role)
    carol = make_user("carol")

    at = NOON
    assert selectors.next_shift_start(user=alice, warehouse_id=berlin.pk, at=at) == dt.datetime(
        2026, 1, 14, 21, 0, tzinfo=UTC
    )
    assert selectors.next_shift_start(user=bob, warehouse_id=berlin.pk, at=at) == dt.datetime(
        2026, 1, 15, 5, 0, tzinfo=UTC
    )
    assert selectors.next_shift_start(user=carol, warehouse_id=berlin.pk, at=at) is None
    # Strictly after: at the very start, the next one is tomorrow's.
    start = dt.datetime(2026, 1, 15, 5, 0, tzinfo=UTC)
    assert selectors.next_shift_start(user=bob, warehouse_id=berlin.pk, at=start) == (
        start + dt.timedelta(days=1)
    )


def test_on_shift_follows_roles_and_a_role_without_shifts_is_always_on(
    berlin, other_warehouse, role, night_role, make_user
):
    shift(berlin, night_role, "22:00", "06:00")
    nightly = make_user("nightly", night_role)
    both = make_user("both", night_role, role)  # `role` has no shift in berlin: always on
    nobody = make_user("nobody")

    ids = {nightly.pk, both.pk, nobody.pk}
    assert selectors.on_shift_user_ids(warehouse_id=berlin.pk, user_ids=ids, at=NOON) == {
        both.pk,
        nobody.pk,
    }
    night = dt.datetime(2026, 1, 14, 23, 0, tzinfo=UTC)
    assert selectors.on_shift_user_ids(warehouse_id=berlin.pk, user_ids=ids, at=night) == ids
    assert not selectors.user_on_shift(user=nightly, warehouse_id=berlin.pk, at=NOON)
    assert selectors.user_on_shift(user=nightly, warehouse_id=other_warehouse.pk, at=NOON)
    assert not selectors.role_on_shift(warehouse_id=berlin.pk, role_id=night_role.pk, at=NOON)
    assert selectors.role_on_shift(warehouse_id=berlin.pk, role_id=role.pk, at=NOON)


def test_on_now_lists_each_role_with_its_running_shift_and_members(
    berlin, role, night_role, make_user
):
    early = shift(berlin, role, "06:00", "14:00", name="Early")
    shift(berlin, night_role, "22:00", "06:00", name="Night")
    make_user("zed", role)
    make_user("amy", role)
    make_user("owl", night_role)
    make_user("gone", role, is_active=False)

    answer = {r.role_id: r for r in selectors.on_now(warehouse_id=berlin.pk, at=NOON)}
    assert set(answer) == {role.pk, night_role.pk}
    on = answer[role.pk]
    assert on.running is not None
    assert on.running.shift.id == early.pk
    assert on.running.occurrence.end == dt.datetime(2026, 1, 14, 13, 0, tzinfo=UTC)
    assert [name for _, name in on.members] == ["amy", "zed"]
    off = answer[night_role.pk]
    assert off.running is None
    assert off.members == ()
    assert off.next_start == dt.datetime(2026, 1, 14, 21, 0, tzinfo=UTC)


def test_steady_reads_query_nothing_and_changes_show_at_once(berlin, role, make_user):
    worker = make_user("worker", role)
    day = shift(berlin, role, "06:00", "14:00")
    assert selectors.user_on_shift(user=worker, warehouse_id=berlin.pk, at=NOON)

    with CaptureQueriesContext(connection) as queries:
        for _ in range(5):
            selectors.user_on_shift(user=worker, warehouse_id=berlin.pk, at=NOON)
            selectors.next_shift_start(user=worker, warehouse_id=berlin.pk, at=NOON)
            selectors.on_now(warehouse_id=berlin.pk, at=NOON)
    assert len(queries) == 0

    day.starts, day.ends = dt.time(13, 0), dt.time(21, 0)
    day.save()
    assert not selectors.user_on_shift(user=worker, warehouse_id=berlin.pk, at=NOON)

    berlin.timezone = "Asia/Shanghai"  # 19:00 there: on again
    berlin.save()
    assert selectors.user_on_shift(user=worker, warehouse_id=berlin.pk, at=NOON)

    newcomer = make_user("newcomer")
    newcomer.groups.add(role)
    members = selectors.role_members(role_id=role.pk)
    assert [name for _, name in members] == ["newcomer", "worker"]

    day.delete()
    assert selectors.shifts_in(warehouse_id=berlin.pk) == ()
