"""The alert report's "per shift" part (SPEC 7 and 13): what each shift handed over, from the
handovers of the report's days (the database; nothing read from Redis). The rows are the
report's (notifications.hooks.ShiftReportRow); apps.py hands `shift_report` to the core.
Also the runs of the shifts in a period with their members, for the noise report's
operator-hours and "over the budget" per shift (SPEC 17): `shift_runs`."""

from __future__ import annotations

import datetime as dt
import statistics

from django.contrib.auth.models import User

from config import timestamps
from notifications.hooks import ShiftReportRow, ShiftRun

from . import cache, schedule
from .models import Handover


def shift_report(*, first_day: dt.date, last_day: dt.date) -> list[ShiftReportRow]:
    """Per shift, the handovers of runs that ended on the UTC days first_day..last_day."""
    start = dt.datetime.combine(first_day, dt.time(), tzinfo=dt.UTC)
    end = dt.datetime.combine(last_day + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    groups: dict[tuple[int, str, str, str], list[Handover]] = {}
    for handover in Handover.objects.filter(
        ends__gte=start, ends__lt=end, completed_at__isnull=False
    ).select_related("warehouse", "role"):
        key = (
            handover.warehouse_id,
            handover.warehouse.code,
            handover.role.name,
            handover.shift_name,
        )
        groups.setdefault(key, []).append(handover)
    rows = []
    for (warehouse_id, code, role, name), runs in groups.items():

        def total(field: str, runs: list[Handover] = runs) -> int:
            return sum(int((h.content.get("counts") or {}).get(field) or 0) for h in runs)

        medians = [
            float(h.content["median_time_to_claim_seconds"])
            for h in runs
            if h.content.get("median_time_to_claim_seconds") is not None
        ]
        rows.append(
            ShiftReportRow(
                warehouse_id=warehouse_id,
                warehouse_code=code,
                role=role,
                shift_name=name,
                runs=len(runs),
                accepted=sum(h.accepted_at is not None for h in runs),
                open_at_end=total("open"),
                claimed_off_shift=total("claimed_off_shift"),
                released=sum(int(h.content.get("released") or 0) for h in runs),
                escalated=total("escalated"),
                resolved=total("resolved"),
                time_to_claim_median=statistics.median(medians) if medians else None,
            )
        )
    rows.sort(key=lambda r: (r.warehouse_code, r.role, r.shift_name))
    return rows


def shift_runs(*, start_ms: int, end_ms: int) -> list[ShiftRun]:
    """The runs of every shift overlapping [start_ms, end_ms), cut to it, each with the
    members of its role (as of now) and every role of each member: the schedule is held per
    process (cache.py), and the members' roles are one query, however long the period."""
    start = timestamps.ms_to_datetime(start_ms)
    end = timestamps.ms_to_datetime(end_ms)
    held = cache.schedule()
    entries = [shift for shifts in held.by_warehouse.values() for shift in shifts]
    member_ids = {
        user_id for shift in entries for user_id, _ in held.members.get(shift.role_id, ())
    }
    roles_of: dict[int, list[int]] = {}
    if member_ids:
        for user_id, role_id in (
            User.groups.through.objects.filter(user_id__in=member_ids)
            .order_by("group_id")
            .values_list("user_id", "group_id")
        ):
            roles_of.setdefault(user_id, []).append(role_id)
    runs = []
    for shift in entries:
        members = tuple(
            (user_id, tuple(roles_of.get(user_id, ())))
            for user_id, _ in held.members.get(shift.role_id, ())
        )
        # Local start days from the day before the period (a run crossing midnight into it).
        day = start.astimezone(schedule.zone(shift.times.timezone)).date() - dt.timedelta(days=1)
        last = end.astimezone(schedule.zone(shift.times.timezone)).date()
        while day <= last:
            run = schedule.occurrence_on(shift.times, day)
            day += dt.timedelta(days=1)
            if run is None or run.end <= start or run.start >= end:
                continue
            runs.append(
                ShiftRun(
                    warehouse_id=shift.warehouse_id,
                    role=held.role_names.get(shift.role_id, ""),
                    shift_name=shift.name,
                    start_ms=int(max(run.start, start).timestamp() * 1000),
                    end_ms=int(min(run.end, end).timestamp() * 1000),
                    members=members,
                )
            )
    return runs
