"""The alert report's "per shift" part (SPEC 7 and 13): what each shift handed over, from the
handovers of the report's days (the database; nothing read from Redis). The rows are the
report's (notifications.hooks.ShiftReportRow); apps.py hands `shift_report` to the core."""

from __future__ import annotations

import datetime as dt
import statistics

from notifications.hooks import ShiftReportRow

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
