"""The simulation's figures, from what the publisher, the handhelds, the receiver and the
database recorded: publish-to-visible per path, critical alerts claimed within 120 s, alerts
lost, actions done twice, and the goals of SPEC 16 / issue 42 they meet or miss.

Publish-to-visible is measured from the publish (the notification's `created_at`, the
server's clock, which is this machine's) to the moment a handheld first had the alert, by the
path that brought it: `stream` (a live event), `replay` (a stream reopened with Last-Event-ID
after a drop, before its `ready`), `poll` (while the stream was refused). An alert counts as
lost when it was acknowledged (201) and a handheld of its warehouse, following it since before
the publish, never had it by the end of the run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

CLAIM_WITHIN = 120.0
PATHS = ("stream", "replay", "poll")


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest rank, as the rest of the benchmarks (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Count, p50, p99 and max, in milliseconds."""

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000, 1)

    return {
        "count": len(values),
        "p50_ms": ms(percentile(values, 0.5)),
        "p99_ms": ms(percentile(values, 0.99)),
        "max_ms": ms(max(values) if values else None),
    }


@dataclass(frozen=True)
class Window:
    kind: str
    start: float
    end: float

    def holds(self, at: float) -> bool:
        return self.start <= at <= self.end


def _iso(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def visible(
    alerts: Sequence[dict[str, Any]], devices: Sequence[dict[str, Any]], windows: Sequence[Window]
) -> dict[str, Any]:
    """Publish-to-visible per path, over the whole run and outside the fault windows; and the
    alerts lost."""
    by_id = {a["id"]: a for a in alerts}
    latencies: dict[str, list[float]] = defaultdict(list)
    outside: dict[str, list[float]] = defaultdict(list)
    for device in devices:
        for alert_id, (at, path) in device["seen"].items():
            alert = by_id.get(alert_id)
            if alert is None:
                continue
            took = max(0.0, at - alert["created_at"])
            latencies[path].append(took)
            latencies["any"].append(took)
            if not any(w.holds(alert["created_at"]) for w in windows):
                outside[path].append(took)
                outside["any"].append(took)
    lost_pairs = []
    for alert in alerts:
        for device in devices:
            joined = device["joined_at"]
            if device["warehouse"] != alert["warehouse"] or joined is None:
                continue
            if joined <= alert["created_at"] and alert["id"] not in device["seen"]:
                lost_pairs.append({"alert": alert["id"], "handheld": device["index"]})
    examples = [_explained(pair, by_id, devices) for pair in lost_pairs[:20]]
    return {
        "all": {path: spread(latencies[path]) for path in (*PATHS, "own", "any")},
        "outside_faults": {path: spread(outside[path]) for path in (*PATHS, "any")},
        "lost": {
            "alerts": len({p["alert"] for p in lost_pairs}),
            "pairs": len(lost_pairs),
            "examples": examples,
        },
    }


def _explained(
    pair: dict[str, Any], by_id: dict[str, dict[str, Any]], devices: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """A lost pair with what it takes to explain it: the alert, who else had it, and what
    the handheld did from 30 s before the publish to 90 s after (seconds from the publish)."""
    alert = by_id[pair["alert"]]
    at = alert["created_at"]
    device = next(d for d in devices if d["index"] == pair["handheld"])
    colleagues = [d for d in devices if d["warehouse"] == alert["warehouse"]]
    return {
        **pair,
        "warehouse": alert["warehouse"],
        "severity": alert["severity"],
        "published_at": datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S.%f")[:-3],
        "had_it": sum(1 for d in colleagues if alert["id"] in d["seen"]),
        "handhelds_there": len(colleagues),
        "trace": [
            f"{t - at:+.3f} s {what} {detail}".rstrip()
            for t, what, detail in device.get("trace", [])
            if -30 <= t - at <= 90
        ],
    }


def claims(
    alerts: Sequence[dict[str, Any]], acts: Iterable[dict[str, Any]], *, ended_at: float
) -> dict[str, Any]:
    """Critical alerts claimed within 120 s of their publish (the first claim, by the
    server's `claimed_at`); alerts published less than 120 s before the end and not yet
    claimed are not due and left out."""
    first: dict[str, float] = {}
    for act in acts:
        if act["kind"] != "claim" or act.get("status") != 200:
            continue
        at = _iso(act.get("claimed_at"))
        if at is not None and (act["alert"] not in first or at < first[act["alert"]]):
            first[act["alert"]] = at
    critical = [a for a in alerts if a["severity"] == "critical"]
    times, late, not_due = [], [], 0
    for alert in critical:
        claimed = first.get(alert["id"])
        if claimed is not None:
            took = claimed - alert["created_at"]
            times.append(took)
            if took > CLAIM_WITHIN:
                late.append({"alert": alert["id"], "seconds": round(took, 1)})
        elif ended_at - alert["created_at"] < CLAIM_WITHIN:
            not_due += 1
        else:
            late.append({"alert": alert["id"], "seconds": None})
    due = len(critical) - not_due
    within = sum(1 for t in times if t <= CLAIM_WITHIN)
    return {
        "critical": len(critical),
        "due": due,
        "claimed_within_120s": within,
        "share": None if not due else within / due,
        "time_to_claim_p50_s": _round(percentile(times, 0.5)),
        "time_to_claim_p99_s": _round(percentile(times, 0.99)),
        "late_or_unclaimed": late[:20],
    }


def operators(acts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the operators' requests met on the lossy network."""
    out: dict[str, Any] = {}
    for kind in ("claim", "press"):
        mine = [a for a in acts if a["kind"] == kind]
        statuses: Counter[str] = Counter()
        for act in mine:
            statuses.update(act.get("statuses", {}))
        out[kind] = {
            "made": len(mine),
            "answers": dict(Counter(str(a.get("status")) for a in mine)),
            "attempts": sum(a["attempts"] for a in mine),
            "answered_as_replay": sum(1 for a in mine if a.get("replayed")),
            "on_the_way": dict(statuses),
        }
    return out


def counts(devices: Sequence[dict[str, Any]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for device in devices:
        total.update(device["counts"])
    return dict(sorted(total.items()))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
