"""Reads of the schedule: who is on shift, when a role's or a user's next shift starts.

All of them read the per-process schedule (shifts/cache.py): no database query in steady
state. `at` is an aware datetime (callers pass `config.timestamps.now()`).

The rule (SPEC 13): a user is on shift in a warehouse when a shift of one of their roles there
is running; a role with no shift in that warehouse is always on. So a user is off shift only
when every role they have there has shifts and none of them runs (a user with no role at all
is not governed by shifts: always on).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User

from directory import cache as directory_cache

from . import cache, schedule
from .cache import ShiftEntry
from .schedule import Occurrence


@dataclass(frozen=True)
class Running:
    """A shift and its occurrence running now."""

    shift: ShiftEntry
    occurrence: Occurrence


@dataclass(frozen=True)
class RoleOnNow:
    """A role with shifts in a warehouse: its running shift (None when off) and the members
    (id, username) on shift through it."""

    role_id: int
    role_name: str
    running: Running | None
    members: tuple[tuple[int, str], ...]
    next_start: dt.datetime | None


def shifts_in(*, warehouse_id: int, role_id: int | None = None) -> tuple[ShiftEntry, ...]:
    """The shifts of a warehouse (of one role, when given)."""
    return cache.schedule().of(warehouse_id, role_id)


def role_has_shifts(*, warehouse_id: int, role_id: int) -> bool:
    return bool(shifts_in(warehouse_id=warehouse_id, role_id=role_id))


def running(*, warehouse_id: int, role_id: int, at: dt.datetime) -> list[Running]:
    """The role's shifts running at `at` in that warehouse, the one ending last first."""
    found = []
    for shift in shifts_in(warehouse_id=warehouse_id, role_id=role_id):
        occurrence = schedule.current(shift.times, at)
        if occurrence is not None:
            found.append(Running(shift, occurrence))
    return sorted(found, key=lambda r: (r.occurrence.end, r.shift.id), reverse=True)


def role_on_shift(*, warehouse_id: int, role_id: int, at: dt.datetime) -> bool:
    """Whether the role works in that warehouse now: it has no shifts there, or one runs."""
    shifts = shifts_in(warehouse_id=warehouse_id, role_id=role_id)
    return not shifts or any(schedule.is_running(s.times, at) for s in shifts)


def role_next_start(*, warehouse_id: int, role_id: int, at: dt.datetime) -> dt.datetime | None:
    """The next start (strictly after `at`) of one of the role's shifts there, or None."""
    starts = [
        start
        for s in shifts_in(warehouse_id=warehouse_id, role_id=role_id)
        if (start := schedule.next_start(s.times, at)) is not None
    ]
    return min(starts, default=None)


def next_shift_start(*, user: User, warehouse_id: int, at: dt.datetime) -> dt.datetime | None:
    """The next start (strictly after `at`) of a shift of one of the user's roles in that
    warehouse; None when none of their roles has a shift there."""
    starts = [
        start
        for role_id in directory_cache.role_ids(user)
        if (start := role_next_start(warehouse_id=warehouse_id, role_id=role_id, at=at)) is not None
    ]
    return min(starts, default=None)


def _user_on(role_ids: Iterable[int], *, warehouse_id: int, at: dt.datetime) -> bool:
    roles = list(role_ids)
    if not roles:
        return True
    return any(role_on_shift(warehouse_id=warehouse_id, role_id=r, at=at) for r in roles)


def user_on_shift(*, user: User, warehouse_id: int, at: dt.datetime) -> bool:
    """Whether the user is on shift in that warehouse at `at` (see the module docstring)."""
    return _user_on(directory_cache.role_ids(user), warehouse_id=warehouse_id, at=at)


def on_shift_user_ids(*, warehouse_id: int, user_ids: Iterable[int], at: dt.datetime) -> set[int]:
    """Those of these users who are on shift in that warehouse at `at`."""
    if not shifts_in(warehouse_id=warehouse_id):
        return {int(u) for u in user_ids}  # no shifts there: everyone is always on
    return {
        int(user_id)
        for user_id in user_ids
        if _user_on(
            directory_cache.role_ids(User(pk=int(user_id))), warehouse_id=warehouse_id, at=at
        )
    }


def role_members(*, role_id: int) -> tuple[tuple[int, str], ...]:
    """The active members (id, username) of a role that has shifts somewhere."""
    return cache.schedule().members.get(int(role_id), ())


def on_now(*, warehouse_id: int, at: dt.datetime) -> list[RoleOnNow]:
    """For each role with shifts in that warehouse (by id): its running shift and its members
    on shift now (all of its active members while a shift of it runs, none otherwise)."""
    shifts = shifts_in(warehouse_id=warehouse_id)
    answer = []
    for role_id in sorted({s.role_id for s in shifts}):
        now = running(warehouse_id=warehouse_id, role_id=role_id, at=at)
        answer.append(
            RoleOnNow(
                role_id=role_id,
                role_name=cache.schedule().role_names.get(role_id, ""),
                running=now[0] if now else None,
                members=role_members(role_id=role_id) if now else (),
                next_start=role_next_start(warehouse_id=warehouse_id, role_id=role_id, at=at),
            )
        )
    return answer


def may_see_shifts(*, user: User, warehouse_id: int) -> bool:
    """Staff, or a member of a role with shifts in that warehouse."""
    if user.is_staff:
        return True
    roles = {s.role_id for s in shifts_in(warehouse_id=warehouse_id)}
    return bool(roles.intersection(directory_cache.role_ids(user)))
