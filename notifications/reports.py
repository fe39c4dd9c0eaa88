"""The managers' report of the alert lifecycle: per warehouse and message type, how many alerts
were published, claimed, resolved and escalated, and how long claiming and resolving took."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from django.utils.translation import get_language

from config import timestamps
from subscriptions.models import MessageType, Warehouse

from . import hooks, lifecycle_store
from .hooks import ShiftReportRow
from .store import report_day


@dataclass(frozen=True)
class Spread:
    """Median and 90th percentile, in seconds (nearest rank), of some durations."""

    median: float
    p90: float
    samples: int

    @classmethod
    def of(cls, durations_ms: list[int]) -> Spread | None:
        if not durations_ms:
            return None
        ordered = sorted(durations_ms)
        return cls(
            median=_rank(ordered, 0.5) / 1000, p90=_rank(ordered, 0.9) / 1000, samples=len(ordered)
        )


def _rank(ordered: list[int], share: float) -> int:
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass(frozen=True)
class ReportRow:
    warehouse_id: int
    warehouse_code: str
    message_type: str
    message_type_name: str  # in the language of the request (the code for a deleted type)
    published: int
    claimed: int
    resolved: int
    escalated: int
    time_to_claim: Spread | None
    time_to_resolve: Spread | None


DAY_MS = 86_400_000


@dataclass(frozen=True)
class ReportScope:
    """What a report of the last days covers, the alert report and the noise report alike: its
    UTC days up to now, the warehouses, and the message types."""

    now_ms: int
    day_numbers: list[int]  # days since the epoch, oldest first, today last
    codes: dict[int, str]  # warehouse id -> code
    type_names: dict[str, str]  # message type code -> its name in the request's language
    internal: set[str]  # the product's own types (canaries): no row

    @property
    def first_day(self) -> date:
        return timestamps.ms_to_datetime(self.day_numbers[0] * DAY_MS).date()

    @property
    def last_day(self) -> date:
        return timestamps.ms_to_datetime(self.day_numbers[-1] * DAY_MS).date()


def report_scope(*, days: int, at_ms: int | None) -> ReportScope:
    """The last `days` UTC days, today included, up to `at_ms` (None: now)."""
    now = timestamps.now_ms() if at_ms is None else at_ms
    today = report_day(now)
    codes = dict(Warehouse.objects.values_list("pk", "code"))
    language = get_language()
    types = list(MessageType.objects.all())
    return ReportScope(
        now_ms=now,
        day_numbers=list(range(today - days + 1, today + 1)),
        codes=codes,
        type_names={mt.code: mt.display_name(language) for mt in types},
        internal={mt.code for mt in types if mt.internal},
    )


@dataclass(frozen=True)
class AlertReport:
    days: int
    first_day: date
    last_day: date
    rows: list[ReportRow]
    # What each shift handed over in the period (hooks.shift_report: shifts/reports.py).
    per_shift: list[ShiftReportRow] = field(default_factory=list)


def alert_report(*, days: int, at_ms: int | None = None) -> AlertReport:
    """The last `days` UTC days, today included, of every warehouse (rows with any activity),
    ordered by warehouse code and message type. Events count on the day they happened."""
    scope = report_scope(days=days, at_ms=at_ms)
    codes, type_names, internal = scope.codes, scope.type_names, scope.internal
    figures = lifecycle_store.report_figures(list(codes), scope.day_numbers)
    rows = []
    for warehouse_id, per_day in figures.items():
        counts: Counter[tuple[str, str]] = Counter()
        claims: dict[str, list[int]] = {}
        resolves: dict[str, list[int]] = {}
        for day in per_day:
            counts.update(day.counts)
            for type_code, samples in day.claim_ms.items():
                claims.setdefault(type_code, []).extend(samples)
            for type_code, samples in day.resolve_ms.items():
                resolves.setdefault(type_code, []).extend(samples)
        for type_code in sorted({t for t, _ in counts} | set(claims) | set(resolves) - internal):
            if type_code in internal:
                continue
            rows.append(
                ReportRow(
                    warehouse_id=warehouse_id,
                    warehouse_code=codes[warehouse_id],
                    message_type=type_code,
                    message_type_name=type_names.get(type_code, type_code),
                    published=counts[(type_code, "published")],
                    claimed=counts[(type_code, "claimed")],
                    resolved=counts[(type_code, "resolved")],
                    escalated=counts[(type_code, "escalated")],
                    time_to_claim=Spread.of(claims.get(type_code, [])),
                    time_to_resolve=Spread.of(resolves.get(type_code, [])),
                )
            )
    rows.sort(key=lambda row: (row.warehouse_code, row.message_type))
    return AlertReport(
        days=days,
        first_day=scope.first_day,
        last_day=scope.last_day,
        rows=rows,
        per_shift=hooks.shift_report(first_day=scope.first_day, last_day=scope.last_day),
    )
