"""The fixed KEYS layout of a warehouse's read model: the same positions in every script.

Every script that takes the read-model prelude (lua/read_model/) gets these keys first, in
this order, and its own keys after them (from FIRST_OWN). The prelude names the positions
(`K.notes`, ...); tests/notifications/test_readmodel_contract.py pins that both lists agree.
"""

from __future__ import annotations

from collections.abc import Callable

from subscriptions.keys import WarehouseId

from .. import keys

DAY_MS = 86_400_000

# (name in the prelude's K table, the key of a warehouse). The report keys are today's: their
# names change with the day, their positions do not.
WAREHOUSE: tuple[tuple[str, Callable[[int, int], str]], ...] = (
    ("seq", lambda w, d: keys.sequence(w)),
    ("notes", lambda w, d: keys.contents(w)),
    ("ids", lambda w, d: keys.ids(w)),
    ("routes", lambda w, d: keys.routes(w)),
    ("expiry", lambda w, d: keys.expiry(w)),
    ("flags", lambda w, d: keys.flags(w)),
    ("states", lambda w, d: keys.states(w)),
    ("changes", lambda w, d: keys.changes(w)),
    ("history", lambda w, d: keys.history(w)),
    ("escalations", lambda w, d: keys.escalations(w)),
    ("reminders", lambda w, d: keys.reminders(w)),
    ("classes", lambda w, d: keys.classes(w)),
    ("places", lambda w, d: keys.places(w)),
    ("open", lambda w, d: keys.open_index(w)),
    ("users", lambda w, d: keys.users(w)),
    ("reads", lambda w, d: keys.reads(w)),
    ("snoozes", lambda w, d: keys.snoozes(w)),
    ("report", lambda w, d: keys.report_counts(w, d)),
    ("claim_ms", lambda w, d: keys.report_durations(w, d, "claim")),
    ("resolve_ms", lambda w, d: keys.report_durations(w, d, "resolve")),
    ("silenced", lambda w, d: keys.silenced(w)),
    ("noise_hours", lambda w, d: keys.report_noise_hours(w, d)),
    ("raised_keys", lambda w, d: keys.report_raised_keys(w, d)),
)
NAMES = tuple(name for name, _ in WAREHOUSE)
FIRST_OWN = len(WAREHOUSE) + 1  # KEYS[FIRST_OWN] is a script's first own key (1-based)


def report_day(ms: int) -> int:
    """The UTC day (days since the epoch) the report counts an event at `ms` in."""
    return int(ms) // DAY_MS


def warehouse_keys(warehouse_id: int, now_ms: int) -> tuple[str, ...]:
    """KEYS[1 .. FIRST_OWN - 1] of every read-model script for this warehouse at `now_ms`."""
    day, warehouse = report_day(now_ms), WarehouseId.of(warehouse_id)
    return tuple(build(warehouse, day) for _, build in WAREHOUSE)


def key(warehouse_id: int, name: str) -> str:
    """One key of the layout by its name (not a report key: those need a day)."""
    return dict(zip(NAMES, warehouse_keys(warehouse_id, 0), strict=True))[name]
