"""What a warehouse's canaries say (SPEC 16): its status against the objective and the last
hour's figures. Pure functions of a window read from Redis, so one rule serves the API, the
admin page, /healthz and the alarm."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from django.conf import settings

from config.timestamps import ms_to_datetime

from .store import Canary, Window


class Status(StrEnum):
    OK = "ok"
    LATE = "late"  # the last canary was over the objective on a path, or has not arrived
    MISSING = "missing"  # no canary published for three intervals: beat is not running


@dataclass(frozen=True)
class Objective:
    seconds: float
    target: float

    @classmethod
    def configured(cls) -> Objective:
        return cls(
            float(settings.DELIVERY_OBJECTIVE_SECONDS), float(settings.DELIVERY_OBJECTIVE_TARGET)
        )


@dataclass(frozen=True)
class Hour:
    canaries: int
    within_objective: int
    p50: float | None  # seconds, of each canary's slowest path
    p99: float | None


@dataclass(frozen=True)
class Reading:
    """One warehouse's delivery: its last canary (paths not served, or not arrived: None),
    the hour, and its status."""

    last: Canary | None
    stream_served: bool
    hour: Hour
    status: Status

    def last_at(self) -> datetime | None:
        return None if self.last is None else ms_to_datetime(self.last.sent_ms)

    def stream_seconds(self) -> float | None:
        if self.last is None or not self.stream_served or self.last.stream_ms is None:
            return None
        return self.last.stream_ms / 1000

    def poll_seconds(self) -> float | None:
        if self.last is None or self.last.poll_ms is None:
            return None
        return self.last.poll_ms / 1000


def _paths(canary: Canary, stream_served: bool) -> list[int | None]:
    return [canary.stream_ms, canary.poll_ms] if stream_served else [canary.poll_ms]


def _percentile(ordered: list[float], share: float) -> float:
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def read(window: Window, *, stream_served: bool, objective: Objective | None = None) -> Reading:
    """The warehouse's reading from its window (Redis's clock: `window.now_ms`)."""
    objective = objective or Objective.configured()
    limit_ms = objective.seconds * 1000
    interval_ms = float(settings.CANARY_INTERVAL_SECONDS) * 1000
    late_ms = float(settings.CANARY_LATE_SECONDS) * 1000
    now = window.now_ms
    slowest: list[float] = []
    within = 0
    for canary in window.canaries:
        paths = _paths(canary, stream_served)
        if all(took is not None for took in paths):
            worst = max(took for took in paths if took is not None)
            slowest.append(worst / 1000)
            within += worst <= limit_ms
    slowest.sort()
    hour = Hour(
        canaries=len(window.canaries),
        within_objective=within,
        p50=_percentile(slowest, 0.5) if slowest else None,
        p99=_percentile(slowest, 0.99) if slowest else None,
    )
    last = window.last
    status = Status.OK
    if interval_ms > 0 and (last is None or now - last.sent_ms > 3 * interval_ms):
        status = Status.MISSING
    elif last is not None:
        for took in _paths(last, stream_served):
            if (took is None and now - last.sent_ms > late_ms) or (
                took is not None and took > limit_ms
            ):
                status = Status.LATE
    return Reading(last=last, stream_served=stream_served, hour=hour, status=status)
