"""Every shift, its warehouse's zone and the members of the roles that have shifts, held per
process so that no poll, publish or push reads the database for them in steady state.

It is a holding (directory/holdings.py) built from the shifts, the warehouses (their time
zones), the users (active or not, their names), the roles and their members: a change of any
of these, in any process, replaces the directory's version, and a process that sees a new
version reloads the whole schedule once: shifts are few (a handful per warehouse and role). A
reload is kept only when the version did not move while it read the database (the directory's
rule for every fill), and it is dropped with the directory's cache when that is older than its
MAX_AGE_SECONDS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import User

from directory import holdings

from .schedule import ShiftTimes


@dataclass(frozen=True)
class ShiftEntry:
    """One shift as plain values."""

    id: int
    warehouse_id: int
    role_id: int
    name: str
    release_claims: bool
    times: ShiftTimes


@dataclass(frozen=True)
class Schedule:
    """Every shift by warehouse, and the active members (id, username) of each role that has
    a shift somewhere."""

    by_warehouse: dict[int, tuple[ShiftEntry, ...]] = field(default_factory=dict)
    members: dict[int, tuple[tuple[int, str], ...]] = field(default_factory=dict)
    role_names: dict[int, str] = field(default_factory=dict)

    def of(self, warehouse_id: int, role_id: int | None = None) -> tuple[ShiftEntry, ...]:
        shifts = self.by_warehouse.get(int(warehouse_id), ())
        if role_id is None:
            return shifts
        return tuple(s for s in shifts if s.role_id == int(role_id))


def _load() -> Schedule:
    from django.contrib.auth.models import Group

    from .models import Shift

    by_warehouse: dict[int, list[ShiftEntry]] = {}
    for shift in Shift.objects.select_related("warehouse").order_by("starts", "pk"):
        by_warehouse.setdefault(shift.warehouse_id, []).append(
            ShiftEntry(
                id=shift.pk,
                warehouse_id=shift.warehouse_id,
                role_id=shift.role_id,
                name=shift.name,
                release_claims=shift.release_claims,
                times=shift.times(),
            )
        )
    role_ids = {s.role_id for shifts in by_warehouse.values() for s in shifts}
    members: dict[int, list[tuple[int, str]]] = {}
    rows = (
        User.groups.through.objects.filter(group_id__in=role_ids, user__is_active=True)
        .order_by("user__username")
        .values_list("group_id", "user_id", "user__username")
    )
    for role_id, user_id, username in rows:
        members.setdefault(role_id, []).append((user_id, username))
    return Schedule(
        by_warehouse={k: tuple(v) for k, v in by_warehouse.items()},
        members={k: tuple(v) for k, v in members.items()},
        role_names=dict(Group.objects.filter(pk__in=role_ids).values_list("pk", "name")),
    )


SCHEDULE = holdings.declare(
    "shifts.schedule",
    models=(
        "shifts.Shift",
        "subscriptions.Warehouse",
        "auth.User",
        "auth.User_groups",
        "auth.Group",
    ),
    load=_load,
)


def schedule() -> Schedule:
    """The schedule as of the directory's current version (read once per request)."""
    return SCHEDULE.get()


def loads() -> int:
    """How many times this process has loaded the schedule from the database."""
    return SCHEDULE.loads


def forget() -> None:
    """Drop this process's copy (tests)."""
    SCHEDULE.forget()
