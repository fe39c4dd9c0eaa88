"""The noise report (SPEC 17): per warehouse and message type, how many alerts came, how many
per operator-hour on shift, how many flapped or were silenced, the share the system resolved
before anyone claimed them and the keys that raised most; per shift, how many operators went
over the noise budget. Everything is counted at write time per UTC day
(docs/guide/noise.md, "The noise report"), so the report reads three keys per warehouse and
day and makes a fixed number of queries, whatever the history."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from django.conf import settings

from . import hooks, lifecycle_store
from .lifecycle_store import NoiseDay
from .reports import DAY_MS, report_scope

HOUR_MS = 3_600_000
TOP_KEYS = 10


@dataclass(frozen=True)
class RaisedKey:
    key: str
    raises: int


@dataclass(frozen=True)
class NoiseRow:
    warehouse_id: int
    warehouse_code: str
    message_type: str
    message_type_name: str  # in the language of the request (the code for a deleted type)
    alerts: int  # published
    alerts_per_operator_hour: float | None  # None: nobody was on a shift in the warehouse
    flapping: int
    silenced: int
    resolved_by_system_unclaimed: int
    share_resolved_by_system_unclaimed: float | None  # of `alerts`; None without any
    top_keys: list[RaisedKey]


@dataclass(frozen=True)
class ShiftNoiseRow:
    """One shift (by warehouse, role and name) over the period."""

    warehouse_id: int
    warehouse_code: str
    role: str
    shift_name: str
    runs: int
    operator_hours: float
    operators: int  # members of its role (as of now)
    over_budget: int  # of them, those who went over the budget in one of its runs


@dataclass(frozen=True)
class NoiseReport:
    days: int
    first_day: date
    last_day: date
    budget_per_hour: int
    rows: list[NoiseRow]
    per_shift: list[ShiftNoiseRow]


def noise_report(*, days: int, at_ms: int | None = None) -> NoiseReport:
    """The last `days` UTC days, today included (up to now), of every warehouse (rows with any
    activity), ordered by warehouse code and message type."""
    scope = report_scope(days=days, at_ms=at_ms)
    day_numbers, codes, type_names, internal = (
        scope.day_numbers,
        scope.codes,
        scope.type_names,
        scope.internal,
    )
    figures = lifecycle_store.noise_figures(list(codes), day_numbers)
    runs = [
        run
        for run in hooks.shift_runs(start_ms=day_numbers[0] * DAY_MS, end_ms=scope.now_ms)
        if run.warehouse_id in codes
    ]
    operator_hours: dict[int, float] = {}
    for run in runs:
        operator_hours[run.warehouse_id] = operator_hours.get(run.warehouse_id, 0.0) + hours_of(run)
    rows = []
    for warehouse_id, per_day in figures.items():
        counts: Counter[tuple[str, str]] = Counter()
        raised: Counter[tuple[str, str]] = Counter()
        for day in per_day:
            counts.update(day.counts)
            raised.update(day.raised_keys)
        type_codes = {t for t, _ in counts} | {t for t, _ in raised}
        for type_code in sorted(type_codes - internal):
            alerts = counts[(type_code, "published")]
            unclaimed = counts[(type_code, "resolved_unclaimed_by_system")]
            hours = operator_hours.get(warehouse_id, 0.0)
            top = sorted(
                ((key, n) for (t, key), n in raised.items() if t == type_code),
                key=lambda pair: (-pair[1], pair[0]),
            )[:TOP_KEYS]
            rows.append(
                NoiseRow(
                    warehouse_id=warehouse_id,
                    warehouse_code=codes[warehouse_id],
                    message_type=type_code,
                    message_type_name=type_names.get(type_code, type_code),
                    alerts=alerts,
                    alerts_per_operator_hour=round(alerts / hours, 3) if hours else None,
                    flapping=counts[(type_code, "flapping")],
                    silenced=counts[(type_code, "silenced")],
                    resolved_by_system_unclaimed=unclaimed,
                    share_resolved_by_system_unclaimed=(
                        round(unclaimed / alerts, 3) if alerts else None
                    ),
                    top_keys=[RaisedKey(key, n) for key, n in top],
                )
            )
    rows.sort(key=lambda row: (row.warehouse_code, row.message_type))
    return NoiseReport(
        days=days,
        first_day=scope.first_day,
        last_day=scope.last_day,
        budget_per_hour=settings.NOISE_BUDGET_PER_HOUR,
        rows=rows,
        per_shift=_per_shift(runs, figures, day_numbers, codes),
    )


def hours_of(run: hooks.ShiftRun) -> float:
    """A run's operator-hours: its length in hours times the members of its role."""
    return (run.end_ms - run.start_ms) / HOUR_MS * len(run.members)


@dataclass
class _ShiftTally:
    runs: int = 0
    hours: float = 0.0
    operators: set[int] = field(default_factory=set)
    over: set[int] = field(default_factory=set)


def _per_shift(
    runs: list[hooks.ShiftRun],
    figures: dict[int, list[NoiseDay]],
    day_numbers: list[int],
    codes: dict[int, str],
) -> list[ShiftNoiseRow]:
    """Per shift: an operator went over the budget in a run when, in a UTC clock hour the run
    overlaps, more than NOISE_BUDGET_PER_HOUR raises reached the inboxes they see (their own
    and their roles'). Each class is counted once per raise however many of their inboxes it
    is in, as the prelude's quiet_for counts."""
    budget = settings.NOISE_BUDGET_PER_HOUR
    first_day = day_numbers[0]
    # (warehouse, inboxes a user sees, day) -> raises per hour of that day reaching them.
    seen_hours: dict[tuple[int, frozenset[str], int], list[int]] = {}

    def hours_for(warehouse_id: int, inboxes: frozenset[str], day: int) -> list[int]:
        found = seen_hours.get((warehouse_id, inboxes, day))
        if found is None:
            found = [0] * 24
            index = day - first_day
            if 0 <= index < len(figures.get(warehouse_id, ())):
                figures_of_day = figures[warehouse_id][index]
                seen = {
                    class_id
                    for class_id, members in figures_of_day.classes.items()
                    if inboxes.intersection(members)
                }
                for (hour, class_id), n in figures_of_day.hours.items():
                    if class_id in seen:
                        found[hour] += n
            seen_hours[(warehouse_id, inboxes, day)] = found
        return found

    groups: dict[tuple[int, str, str], _ShiftTally] = {}
    for run in runs:
        group = groups.setdefault((run.warehouse_id, run.role, run.shift_name), _ShiftTally())
        group.runs += 1
        group.hours += hours_of(run)
        for user_id, role_ids in run.members:
            group.operators.add(user_id)
            if budget <= 0 or user_id in group.over:
                continue
            inboxes = frozenset([f"u:{user_id}", *(f"r:{role}" for role in role_ids)])
            for hour in range(run.start_ms // HOUR_MS, -(-run.end_ms // HOUR_MS)):
                if hours_for(run.warehouse_id, inboxes, hour // 24)[hour % 24] > budget:
                    group.over.add(user_id)
                    break
    rows = [
        ShiftNoiseRow(
            warehouse_id=warehouse_id,
            warehouse_code=codes[warehouse_id],
            role=role,
            shift_name=name,
            runs=group.runs,
            operator_hours=round(group.hours, 2),
            operators=len(group.operators),
            over_budget=len(group.over),
        )
        for (warehouse_id, role, name), group in groups.items()
    ]
    rows.sort(key=lambda r: (r.warehouse_code, r.role, r.shift_name))
    return rows
