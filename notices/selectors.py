"""Reads of notices (SPEC 15): whose they are, my acknowledgement, the roster.

The audience of a notice is read when asked (never copied at publishing): the active members
of its roles now, plus its users. So a member who joins a role later is on the roster (missing
until they acknowledge) and one who left is not.

`roster` costs three queries whatever the audience's size: the audience, the current
version's acknowledgements and the audience's roles (for who is on shift, which the schedule
held per process answers: shifts/cache.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import OuterRef, Q, QuerySet, Subquery

from directory import cache as directory_cache
from shifts import selectors as shifts

from .models import Notice, NoticeAck


@dataclass(frozen=True)
class RosterRow:
    user_id: int
    username: str
    acked_at: dt.datetime | None
    on_shift: bool


@dataclass(frozen=True)
class Roster:
    notice_id: int
    version: int
    rows: list[RosterRow]

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def acknowledged(self) -> int:
        return sum(1 for row in self.rows if row.acked_at is not None)

    @property
    def missing(self) -> int:
        return self.total - self.acknowledged


def _in_audience(user: User) -> Q:
    return Q(roles__in=directory_cache.role_ids(user)) | Q(users=user.pk)


def audience_ids(notice: Notice | int) -> QuerySet[User]:
    """The audience's active users (a query, for use as a subquery or read once)."""
    pk = notice.pk if isinstance(notice, Notice) else int(notice)
    roles = Notice.roles.through.objects.filter(notice_id=pk).values("group_id")
    users = Notice.users.through.objects.filter(notice_id=pk).values("user_id")
    return User.objects.filter(Q(groups__in=roles) | Q(pk__in=users), is_active=True)


def in_audience(*, user: User, notice: Notice) -> bool:
    """Whether the user is in the notice's audience (one query)."""
    return Notice.objects.filter(pk=notice.pk).filter(_in_audience(user)).exists()


def may_see_roster(*, user: User, notice: Notice) -> bool:
    """Staff, or a member of the notice's escalation role."""
    if user.is_staff:
        return True
    return (
        notice.escalation_role_id is not None
        and notice.escalation_role_id in directory_cache.role_ids(user)
    )


def _with_my_ack(found: QuerySet[Notice], user: User) -> QuerySet[Notice]:
    mine = NoticeAck.objects.filter(notice=OuterRef("pk"), version=OuterRef("version"), user=user)
    return found.annotate(my_ack=Subquery(mine.values("acked_at")[:1]))


def notices_for(*, user: User, warehouse_id: int, limit: int) -> list[Notice]:
    """The warehouse's notices whose audience the user is in, or whose escalation role they
    are in (staff: all), newest first, each with `my_ack` (when they acknowledged the current
    version, or None) and `in_audience`."""
    found = Notice.objects.filter(warehouse_id=warehouse_id)
    mine = set(found.filter(_in_audience(user)).order_by().values_list("pk", flat=True).distinct())
    if not user.is_staff:
        overseen = Q(escalation_role__in=directory_cache.role_ids(user))
        found = found.filter(Q(pk__in=mine) | overseen)
    notices = list(_with_my_ack(found, user).order_by("-created_at", "-pk")[:limit])
    for notice in notices:
        notice.in_audience = notice.pk in mine  # type: ignore[attr-defined]
    return notices


def notice_for(*, user: User, notice_id: int) -> Notice | None:
    """One notice, with `my_ack` and `in_audience`, if the user is in its audience, staff, in
    its escalation role, or may edit notices; None otherwise (the API answers 404)."""
    if not 0 < notice_id < 2**63:
        return None
    notice = _with_my_ack(Notice.objects.filter(pk=notice_id), user).first()
    if notice is None:
        return None
    notice.in_audience = in_audience(user=user, notice=notice)  # type: ignore[attr-defined]
    if (
        notice.in_audience  # type: ignore[attr-defined]
        or may_see_roster(user=user, notice=notice)
        or user.has_perm("notices.change_notice")
    ):
        return notice
    return None


def _on_shift(
    *, warehouse_id: int, roles_of: dict[int, list[int]], user_ids: Iterable[int], at: dt.datetime
) -> set[int]:
    """Those users on shift there at `at` (the rule of shifts/selectors.py: on when they have
    no role, or one of their roles has no shift there or a running one)."""
    ids = list(user_ids)
    if not shifts.shifts_in(warehouse_id=warehouse_id):
        return set(ids)  # no shifts in this warehouse: everyone is always on
    role_on: dict[int, bool] = {}

    def on(role_id: int) -> bool:
        if role_id not in role_on:
            role_on[role_id] = shifts.role_on_shift(
                warehouse_id=warehouse_id, role_id=role_id, at=at
            )
        return role_on[role_id]

    return {u for u in ids if not roles_of.get(u) or any(on(r) for r in roles_of[u])}


def roster(*, notice: Notice, at: dt.datetime) -> Roster:
    """Everyone in the audience now, with when they acknowledged the current version and
    whether they are on shift: the missing first (by name), then by time of acknowledgement."""
    audience = audience_ids(notice)
    people = list(audience.order_by().values_list("pk", "username").distinct())
    acks = dict(
        NoticeAck.objects.filter(notice_id=notice.pk, version=notice.version).values_list(
            "user_id", "acked_at"
        )
    )
    roles_of: dict[int, list[int]] = {}
    if shifts.shifts_in(warehouse_id=notice.warehouse_id):
        memberships = User.groups.through.objects.filter(
            user_id__in=audience.values("pk")
        ).values_list("user_id", "group_id")
        for user_id, group_id in memberships:
            roles_of.setdefault(user_id, []).append(group_id)
    on = _on_shift(
        warehouse_id=notice.warehouse_id,
        roles_of=roles_of,
        user_ids=(pk for pk, _ in people),
        at=at,
    )
    rows = [
        RosterRow(user_id=pk, username=name, acked_at=acks.get(pk), on_shift=pk in on)
        for pk, name in people
    ]
    far = dt.datetime.max.replace(tzinfo=dt.UTC)
    rows.sort(key=lambda r: (r.acked_at is not None, r.acked_at or far, r.username))
    return Roster(notice_id=notice.pk, version=notice.version, rows=rows)


def missing_members(*, notice: Notice) -> list[tuple[int, str]]:
    """(id, username) of the audience who have not acknowledged the current version, by name."""
    acked = NoticeAck.objects.filter(notice_id=notice.pk, version=notice.version).values("user_id")
    return list(
        audience_ids(notice)
        .exclude(pk__in=acked)
        .order_by("username")
        .values_list("pk", "username")
        .distinct()
    )
