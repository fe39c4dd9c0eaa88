"""The measuring kit: interleaved rounds, medians and ranges, goals, and the markdown table.

Every figure is measured in rounds, and in each round every side (the project and its
baselines) runs once, one after the other, in an order that rotates from round to round. On
a noisy shared machine the ratio of two sides measured seconds apart is far steadier than
either figure, so each ratio is taken per round (paired) and its median reported.
"""

from __future__ import annotations

import enum
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


class Verdict(enum.Enum):
    """Whether a row meets its goal. A ratio's verdict is taken on its whole range, not only its
    median: on a noisy machine a range that crosses the goal decides nothing."""

    MET = "yes"
    MISSED = "**no**"
    UNDECIDED = "not distinguishable"


@dataclass
class Measure:
    """One figure measured once per round, e.g. requests per second of one endpoint."""

    unit: str
    values: list[float] = field(default_factory=list)
    fmt: str = "{:.3g}"

    @property
    def median(self) -> float:
        # A count (queries, entries) is a figure like any other: always a float.
        return float(statistics.median(self.values)) if self.values else float("nan")

    def text(self) -> str:
        if not self.values:
            return "—"
        low, high = min(self.values), max(self.values)
        # "0.53x", "3", "12 ms": a unit that is a word gets a space, "x…" and none do not.
        unit = self.unit if not self.unit or self.unit.startswith("x") else f" {self.unit}"
        middle = self._num(self.median) + unit
        if len(self.values) == 1 or low == high:
            return middle
        return f"{middle} [{self._num(low)}\N{EN DASH}{self._num(high)}]"

    def _num(self, value: float) -> str:
        if value != value:  # NaN
            return "nan"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return self.fmt.format(value)

    def as_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "values": self.values,
            "median": self.median if self.values else None,
            "min": min(self.values) if self.values else None,
            "max": max(self.values) if self.values else None,
        }


@dataclass
class Line:
    """One line of the table: the project's figure, its baseline's, their ratio and the goal.

    `ratio` is per round, in the terms of the goal (e.g. project req/s over the floor's, or
    the project's bytes over the source design's); `met` says whether its median meets it.
    """

    row: str
    work: str
    project: Measure
    baseline: Measure | None = None
    baseline_name: str = ""
    ratio: Measure | None = None
    goal: str = ""
    met: bool | Verdict | None = None
    note: str = ""

    @property
    def verdict(self) -> Verdict | None:
        if self.met is None or isinstance(self.met, Verdict):
            return self.met
        return Verdict.MET if self.met else Verdict.MISSED

    def cells(self, *, judged: bool = True) -> list[str]:
        base = "—"
        if self.baseline is not None:
            base = self.baseline.text()
            if self.baseline_name:
                base = f"{self.baseline_name}: {base}"
        ratio = self.ratio.text() if self.ratio is not None else "—"
        verdict = self.verdict
        met = verdict.value if judged and verdict is not None else "—"
        work = f"{self.work} ({self.note})" if self.note else self.work
        return [self.row, work, self.project.text(), base, ratio, self.goal, met]

    def as_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "work": self.work,
            "project": self.project.as_dict(),
            "baseline": self.baseline.as_dict() if self.baseline else None,
            "baseline_name": self.baseline_name,
            "ratio": self.ratio.as_dict() if self.ratio else None,
            "goal": self.goal,
            "met": self.verdict.value if self.verdict is not None else None,
            "note": self.note,
        }


def interleave(rounds: int, sides: dict[str, Callable[[], Any]]) -> dict[str, list[Any]]:
    """Run every side once per round, rotating which goes first; returns each side's results."""
    names = list(sides)
    results: dict[str, list[Any]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            results[name].append(sides[name]())
    return results


def paired(
    top: Sequence[float], bottom: Sequence[float], *, unit: str = "x", fmt: str = "{:.2f}"
) -> Measure:
    """Per-round ratios top / bottom (rounds where bottom is 0 are left out)."""
    return Measure(unit, [t / b for t, b in zip(top, bottom, strict=True) if b], fmt=fmt)


def at_least(ratio: Measure, goal: float) -> Verdict | None:
    """Met when every round reaches `goal`, missed when none does, else not distinguishable."""
    if not ratio.values:
        return None
    if min(ratio.values) >= goal:
        return Verdict.MET
    return Verdict.MISSED if max(ratio.values) < goal else Verdict.UNDECIDED


def at_most(ratio: Measure, goal: float) -> Verdict | None:
    """Met when no round exceeds `goal`, missed when every one does, else not distinguishable."""
    if not ratio.values:
        return None
    if max(ratio.values) <= goal:
        return Verdict.MET
    return Verdict.MISSED if min(ratio.values) > goal else Verdict.UNDECIDED


def compared(
    row: str,
    work: str,
    project: Measure,
    baseline: Measure,
    baseline_name: str,
    *,
    ratio: Literal["project/baseline", "baseline/project"],
    goal: str = "",
    minimum: float | None = None,
    maximum: float | None = None,
    note: str = "",
) -> Line:
    """A line comparing the project with its baseline round by round. `ratio` says which side
    is over which (a rate or a size: the project's over the baseline's; a time the goal asks
    to beat: the baseline's over the project's); the goal is met when every round's ratio is
    at least `minimum` or at most `maximum` (neither: a figure with no verdict)."""
    top, bottom = (project, baseline) if ratio == "project/baseline" else (baseline, project)
    per_round = paired(top.values, bottom.values)
    met: Verdict | None = None
    if minimum is not None:
        met = at_least(per_round, minimum)
    elif maximum is not None:
        met = at_most(per_round, maximum)
    return Line(
        row=row,
        work=work,
        project=project,
        baseline=baseline,
        baseline_name=baseline_name,
        ratio=per_round,
        goal=goal,
        met=met,
        note=note,
    )


HEADER = ["row", "work", "project", "baseline", "ratio", "goal", "met?"]
SMOKE_HEADER = "met? (not judged: smoke run)"


def markdown_table(lines: Sequence[Line], *, judged: bool = True) -> str:
    """The lines as a markdown table, each figure `median [min-max]` over the rounds. A run at
    smaller sizes than the goals were set for (`judged` false) prints no verdicts."""
    header = HEADER if judged else [*HEADER[:-1], SMOKE_HEADER]
    out = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for line in lines:
        cells = line.cells(judged=judged)
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)
