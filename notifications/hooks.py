"""Where features hook into notifications: each fills these in from its `AppConfig.ready()`, so
the core imports no feature (docs/architecture/layers.md).

What happened, told through one hook: a feature calls `listen(Published, its_function)`, and
the core calls `announce(...)` after the change is stored:

- `Published`: a notification reached its inboxes (never for a replay or a publish that
  stored nothing);
- `Escalated`: an open alert was escalated to its escalation role's inbox;
- `Changed`: a claim, release or resolve was accepted, by a user (`by`) or by the system (a
  rule's condition cleared, a claim let go at a shift's end: `by` None). Not for a replay.
- `ClaimExpired`: a claim held a type's claim timeout with no progress was let go by the
  system (notifications/claims.py; a `Changed` is not announced for it).

Listeners run in the order they listened (INSTALLED_APPS order), in the caller's process and
thread: queue anything slow. One that raises is logged and the next one runs; what happened
stands (a publish is not failed or undone by a feature's follow-up).

What the core asks, each with a default for a project without the feature:

- `shifts`: who is on shift (SPEC 13): by default every role is always on and no shift starts;
- `shift_report`: the alert report's rows per shift: by default none;
- `actions`: the provider of N's `actions` (SPEC 14): the active actions of a message type in
  the active language. `of` may read the database or Redis; `now` must not (the event
  stream's loop calls it) and answers None when it holds nothing for the type yet. `fit`
  makes them one alert's, from its `data` (an action the data gives nothing to scan for is
  unavailable), reading nothing; by default the list as it is.
- `shift_runs`: the runs of every shift within a period, with the members of its role, for the
  noise report (SPEC 17): by default none.
- `silences`: the planned silence that covers an alert of a type, severity and warehouse at a
  time (SPEC 17), read on the publish path from what the process holds; by default none.
- `unclaimable_types`: the codes of message types whose notifications are read, not claimed
  or resolved (a notice everyone must read is acknowledged on its own, SPEC 15): a claim or
  resolve of one is refused (422) and changes nothing. By default none.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .domain import Actor, InboxItem, Notification

if TYPE_CHECKING:
    from config.users import User

logger = logging.getLogger(__name__)


# --- What happened -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Announcement:
    """Something that happened to a notification (one of the kinds below)."""


@dataclass(frozen=True)
class Published(Announcement):
    notification: Notification
    inboxes: Sequence[str]  # "u:<id>" / "r:<id>": the subscribers it reached


@dataclass(frozen=True)
class Escalated(Announcement):
    item: InboxItem  # its state after the escalation
    inboxes: Sequence[str]  # the escalation role's: ["r:<id>"]


@dataclass(frozen=True)
class Changed(Announcement):
    warehouse_id: int
    notification_id: str
    step: str  # "claim", "release" or "resolve"
    by: Actor | None  # None: the system
    item: InboxItem | None = None  # its state after the step, when the store answered it


@dataclass(frozen=True)
class ClaimExpired(Announcement):
    """A claim held too long with no progress was let go by the system (SPEC 17)."""

    item: InboxItem  # its state after (open again)
    holder_id: int  # who held it
    inboxes: Sequence[str]  # the inboxes it is in


A = TypeVar("A", bound=Announcement)

_listeners: dict[type[Announcement], list[Callable[[Any], None]]] = {}


def listen(kind: type[A], listener: Callable[[A], None]) -> None:
    """Call `listener` with every announcement of this kind (once, however often asked)."""
    found = _listeners.setdefault(kind, [])
    if listener not in found:
        found.append(listener)


def announce(what: Announcement) -> None:
    """Tell every listener of its kind; one that raises is logged, and the next one runs."""
    for listener in _listeners.get(type(what), ()):
        try:
            listener(what)
        except Exception:  # a feature's follow-up must not undo or fail what happened
            logger.exception("A listener (%r) failed for %r", listener, what)


# --- What the core asks ------------------------------------------------------------------------


class Shifts(Protocol):
    """Who is on shift (SPEC 13); `at` is an aware datetime. The shifts app's selectors."""

    def role_on_shift(self, *, warehouse_id: int, role_id: int, at: dt.datetime) -> bool: ...

    def role_next_start(
        self, *, warehouse_id: int, role_id: int, at: dt.datetime
    ) -> dt.datetime | None: ...

    def next_shift_start(
        self, *, user: User, warehouse_id: int, at: dt.datetime
    ) -> dt.datetime | None: ...


class NoShifts:
    """Without a shifts feature: every role is always on, and no shift ever starts."""

    def role_on_shift(self, *, warehouse_id: int, role_id: int, at: dt.datetime) -> bool:
        return True

    def role_next_start(
        self, *, warehouse_id: int, role_id: int, at: dt.datetime
    ) -> dt.datetime | None:
        return None

    def next_shift_start(
        self, *, user: User, warehouse_id: int, at: dt.datetime
    ) -> dt.datetime | None:
        return None


@dataclass(frozen=True)
class ShiftReportRow:
    """One shift (by warehouse, role and name) over the period: how many runs ended, how many
    handovers were accepted, and the sums of their counts. `time_to_claim_median` is the
    median over the runs of each run's median time to claim (seconds), None without one.
    Made by the shifts feature (`shift_report` below); the alert report
    (notifications/reports.py) lists them."""

    warehouse_id: int
    warehouse_code: str
    role: str
    shift_name: str
    runs: int
    accepted: int
    open_at_end: int
    claimed_off_shift: int
    released: int
    escalated: int
    resolved: int
    time_to_claim_median: float | None


class ShiftReport(Protocol):
    """The alert report's rows per shift for the UTC days first_day..last_day."""

    def __call__(self, *, first_day: dt.date, last_day: dt.date) -> list[ShiftReportRow]: ...


def no_shift_report(*, first_day: dt.date, last_day: dt.date) -> list[ShiftReportRow]:
    return []


@dataclass(frozen=True)
class ShiftRun:
    """One run of a shift, cut to a period: [start_ms, end_ms), and the members of its role as
    (user id, the ids of every role the user has). Made by the shifts feature (`shift_runs`
    below); the noise report (notifications/noise_report.py) counts operator-hours with them."""

    warehouse_id: int
    role: str
    shift_name: str
    start_ms: int
    end_ms: int
    members: tuple[tuple[int, tuple[int, ...]], ...]


class ShiftRuns(Protocol):
    """The runs of every shift overlapping [start_ms, end_ms), cut to it."""

    def __call__(self, *, start_ms: int, end_ms: int) -> list[ShiftRun]: ...


def no_shift_runs(*, start_ms: int, end_ms: int) -> list[ShiftRun]:
    return []


class Silences(Protocol):
    """The id of the planned silence covering such an alert at `at_ms`, or None (SPEC 17)."""

    def covering(
        self, *, warehouse_id: int, type_code: str, severity: str, at_ms: int
    ) -> int | None: ...


class NoSilences:
    """Without a silences feature nothing is ever silenced."""

    def covering(
        self, *, warehouse_id: int, type_code: str, severity: str, at_ms: int
    ) -> int | None:
        return None


shifts: Shifts = NoShifts()
silences: Silences = NoSilences()
shift_report: ShiftReport = no_shift_report
shift_runs: ShiftRuns = no_shift_runs

ActionList = list[dict[str, Any]]


@dataclass
class ActionsProvider:
    of: Callable[[str], ActionList] = lambda type_code: []
    now: Callable[[str], ActionList | None] = lambda type_code: []
    fit: Callable[[ActionList, dict[str, Any]], ActionList] = lambda actions, data: actions


actions = ActionsProvider()

# Message types read, not claimed or resolved (see the module docstring); a feature adds its
# type's code from its AppConfig.ready().
unclaimable_types: set[str] = set()
