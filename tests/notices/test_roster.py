"""The roster (SPEC 15): a bounded number of queries whatever the audience's size, and who is
on shift now."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group, User

from config import timestamps
from notices import selectors
from notices.models import Notice, NoticeAck
from shifts.models import Shift

pytestmark = pytest.mark.django_db


def notice_for_members(warehouse, count: int, *, acked: int) -> Notice:
    floor = Group.objects.create(name=f"Floor {count}")
    users = User.objects.bulk_create([User(username=f"op{count}-{n:05d}") for n in range(count)])
    User.groups.through.objects.bulk_create(
        [User.groups.through(user_id=u.pk, group_id=floor.pk) for u in users]
    )
    notice = Notice(warehouse=warehouse, title="Lane B closed", body="")
    notice.save()
    notice.roles.set([floor])
    NoticeAck.objects.bulk_create(
        [
            NoticeAck(notice=notice, version=1, user=u, acked_at=timestamps.now(), text_hash="x")
            for u in users[:acked]
        ]
    )
    return notice


@pytest.mark.parametrize("members", [10, 1000])
def test_the_roster_costs_the_same_queries_for_10_and_1000_members(
    warehouse, members, django_assert_num_queries
):
    Shift.objects.create(
        warehouse=warehouse,
        role=Group.objects.create(name="Night"),
        name="Night",
        starts=dt.time(22),
        ends=dt.time(6),
    )
    notice = notice_for_members(warehouse, members, acked=members // 2)
    selectors.roster(notice=notice, at=timestamps.now())  # the schedule is held per process

    with django_assert_num_queries(3):  # audience, acknowledgements, the audience's roles
        roster = selectors.roster(notice=notice, at=timestamps.now())

    assert (roster.total, roster.acknowledged, roster.missing) == (
        members,
        members // 2,
        members - members // 2,
    )


def test_on_shift_follows_the_members_roles(warehouse, make_user, clock):
    clock.stop_at(int(dt.datetime(2026, 1, 14, 12, 0, tzinfo=dt.UTC).timestamp() * 1000))
    day, night, office = (Group.objects.create(name=n) for n in ("Day", "Night", "Office"))
    Shift.objects.create(
        warehouse=warehouse, role=day, name="Day", starts=dt.time(6), ends=dt.time(14)
    )
    Shift.objects.create(
        warehouse=warehouse, role=night, name="Night", starts=dt.time(22), ends=dt.time(6)
    )
    dana, nick = make_user("dana", day), make_user("nick", night)
    nell = make_user("nell", night, office)  # Office has no shift here: always on
    notice = Notice(warehouse=warehouse, title="Lane B closed", body="")
    notice.save()
    notice.roles.set([day, night])
    notice.users.set([nell])

    roster = selectors.roster(notice=notice, at=timestamps.now())
    assert {r.username: r.on_shift for r in roster.rows} == {
        dana.username: True,
        nick.username: False,
        nell.username: True,
    }
