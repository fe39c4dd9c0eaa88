"""Notification domain objects: frozen dataclasses converted to and from Redis by the store."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, NoReturn, TypeVar

from config.timestamps import ms_to_datetime

# The longest alert key (`key`: the condition a notification names) publish accepts.
ALERT_KEY_MAX_LENGTH = 200


class Severity(StrEnum):
    """Same values as subscriptions.models.Severity; the order is the escalation ladder."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def level(self) -> int:
        """0, 1, 2: the digit the flags hash stores (see keys.flags)."""
        return _LEVELS[self]


# Each severity's place on the ladder (the order the class lists them in).
_LEVELS = {severity: level for level, severity in enumerate(Severity)}


class Status(StrEnum):
    OPEN = "open"
    CLAIMED = "claimed"
    RESOLVED = "resolved"


class Event(StrEnum):
    PUBLISHED = "published"
    CLAIMED = "claimed"
    RELEASED = "released"
    RESOLVED = "resolved"
    ESCALATED = "escalated"
    RERAISED = "reraised"
    SNOOZED = "snoozed"
    WOKE = "woke"
    # SPEC 14: an alert action pressed (`code`), and how its run ended; a reminder sent while
    # nobody claimed it; an e-mail about it sent (`recipients`).
    ACTION = "action"
    ACTION_SUCCEEDED = "action_succeeded"
    ACTION_FAILED = "action_failed"
    REMINDED = "reminded"
    EMAILED = "emailed"
    # SPEC 17: held back by a planned silence when published or raised again; woken when the
    # silence ended or was deleted.
    SILENCED = "silenced"
    UNSILENCED = "unsilenced"
    # SPEC 17: a flapping key raised it again quietly; a claim held too long without progress
    # was let go by the system.
    FLAPPING = "flapping"
    CLAIM_EXPIRED = "claim_expired"


@dataclass(frozen=True)
class Actor:
    """A user as the lifecycle records them: id and username (kept even if renamed later)."""

    id: int
    username: str

    @classmethod
    def from_json(cls, value: Any) -> Actor | None:
        if not isinstance(value, dict):
            return None
        return cls(id=int(value["id"]), username=str(value["username"]))


@dataclass(frozen=True)
class Notification:
    """What is stored once per notification, however many inboxes it reaches.

    `severity` is the severity it was published with; the current one is in its Lifecycle.
    """

    id: str
    message_type: str
    warehouse: int
    title: str
    body: str
    data: dict[str, Any]
    created_at_ms: int
    expires_at_ms: int
    severity: str = Severity.INFO
    key: str | None = None

    def to_json(self) -> str:
        # vars(), not asdict(): the fields in the same order, without asdict's deep copy of
        # `data` (a sixteenth of a publish); json.dumps only reads it.
        return json.dumps(vars(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> Notification:
        """The notification stored as `raw`: the same text always gives the same one, so the
        last PARSED_KEPT parsed are kept (polls of a warehouse read its recent notifications
        over and over; parsing them was a sixth of a first page of 50). Shared between
        requests and threads, so its `data` is read-only (ReadOnlyDict, ReadOnlyList)."""
        found = _parsed.get(raw)
        if found is None:
            fields = json.loads(raw)
            fields["data"] = read_only(fields.get("data", {}))
            found = cls(**fields)
            if len(_parsed) >= PARSED_KEPT:
                _parsed.clear()  # simpler than an LRU, and a miss only costs a parse
            _parsed[raw] = found
        return found


# Notification.from_json's memory, per process: a few MB at most.
PARSED_KEPT = 4096
_parsed: dict[str | bytes, Notification] = {}


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError("A stored notification's data is shared between requests: it is read-only.")


class ReadOnlyDict(dict[str, Any]):
    """A JSON object that cannot be changed in place, yet is a dict to every reader (json,
    orjson, DRF, isinstance checks): a shared notification's `data`. Copy it (`dict(x)`) to
    change it."""

    __slots__ = ()

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        _refuse()

    def __delitem__(self, key: str) -> NoReturn:
        _refuse()

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refuse()

    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:  # copy, deepcopy and pickle build it whole
        return (ReadOnlyDict, (dict(self),))


class ReadOnlyList(list[Any]):
    """A JSON array that cannot be changed in place (see ReadOnlyDict)."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refuse()

    def __delitem__(self, index: Any) -> NoReturn:
        _refuse()

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refuse()

    def __imul__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refuse()

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyList, (list(self),))


def read_only(value: Any) -> Any:
    """A parsed JSON value whose objects and arrays, at every depth, cannot be changed."""
    if isinstance(value, dict):
        return ReadOnlyDict({key: read_only(item) for key, item in value.items()})
    if isinstance(value, list):
        return ReadOnlyList([read_only(item) for item in value])
    return value


@dataclass(frozen=True)
class Lifecycle:
    """Where a notification stands: who is on it, whether it is done, how urgent it is now."""

    status: Status = Status.OPEN
    severity: Severity = Severity.INFO
    claimed_by: Actor | None = None
    claimed_at_ms: int | None = None
    resolved_by: Actor | None = None
    resolved_at_ms: int | None = None
    escalated_at_ms: int | None = None
    occurrences: int = 1
    silenced: bool = False  # held back by a planned silence (SPEC 17)
    flapping: bool = False  # its key flapped: raised again quietly at least once (SPEC 17)

    @classmethod
    def initial(cls, notification: Notification) -> Lifecycle:
        return cls(severity=Severity(notification.severity))

    @classmethod
    def from_json(cls, raw: str | bytes) -> Lifecycle:
        """The JSON the lifecycle scripts (readmodel/lua/) write (unknown keys, e.g.
        first_claimed_at, ignored)."""
        value = json.loads(raw)

        def ms(name: str) -> int | None:
            return None if value.get(name) is None else int(value[name])

        return cls(
            status=Status(value["status"]),
            severity=Severity(value["severity"]),
            claimed_by=Actor.from_json(value.get("claimed_by")),
            claimed_at_ms=ms("claimed_at"),
            resolved_by=Actor.from_json(value.get("resolved_by")),
            resolved_at_ms=ms("resolved_at"),
            escalated_at_ms=ms("escalated_at"),
            occurrences=int(value.get("occurrences") or 1),
            silenced=bool(value.get("silenced")),
            flapping=bool(value.get("flapping")),
        )


@dataclass(frozen=True)
class InboxItem:
    """A notification as one user sees it: with its cursor, lifecycle and the user's read state.

    `cursor` is the latest: a change of status gives the notification a new, higher one.
    """

    notification: Notification
    cursor: int
    read: bool
    state: Lifecycle | None = None  # None: never changed since publishing
    snoozed_until_ms: int | None = None  # the user's snooze of it: when it wakes
    quiet: bool = False  # came quietly to the user: beyond their noise budget (SPEC 17)

    @property
    def lifecycle(self) -> Lifecycle:
        return self.state if self.state is not None else Lifecycle.initial(self.notification)


@dataclass(frozen=True)
class HistoryEntry:
    event: Event
    at_ms: int
    by: Actor | None = None
    until_ms: int | None = None  # snoozed: until when
    code: str | None = None  # action, action_succeeded, action_failed: the action's code
    recipients: int | None = None  # emailed: to how many


@dataclass(frozen=True)
class ViewVersion:
    """What a user's view of a warehouse depends on besides their roles: the warehouse's
    sequence (every publish and change of status takes a cursor from it), the next expiry
    time or the end of the user's active mute, whichever comes first (the view changes when
    it passes) and the user's read version (their reads).
    Equal versions and roles: the same answer (the API's ETag)."""

    sequence: str = "0"
    next_expiry: str = ""
    read_version: str = "0"


@dataclass(frozen=True)
class IfNoneMatch:
    """A client's If-None-Match, for the read model to compare in the same call as the answer:
    the ETag's text before and after the version, and the client's ETags' hex
    (notifications/api/etags.py builds it, notifications/readmodel/lua/read_model/ compares)."""

    before: str
    after: str
    tags: tuple[str, ...]


T = TypeVar("T")


@dataclass(frozen=True)
class NotModified:
    """The client's ETag is still the answer's (its version, to tag the 304 with)."""

    version: ViewVersion


def answered(found: T | NotModified) -> T:
    """What a read made without the client's ETags returns: always the answer itself."""
    if isinstance(found, NotModified):
        raise RuntimeError("the read model found an ETag unchanged that nobody sent")
    return found


@dataclass(frozen=True)
class InboxPage:
    items: list[InboxItem]
    unread_count: int
    next_since: int
    version: ViewVersion = field(default_factory=ViewVersion)
    # The page stopped before the newest change: not caught up, ask again from next_since.
    has_more: bool = False
    # The oldest slot still in the user's inboxes (None: they hold nothing): a cursor below it
    # may have missed notifications swept since, so a stream cannot replay from it (SPEC 11).
    oldest: int | None = None


@dataclass(frozen=True)
class UnreadSummary:
    unread_count: int
    latest: list[InboxItem] = field(default_factory=list)
    by_severity: dict[str, int] = field(default_factory=lambda: dict.fromkeys(Severity, 0))
    version: ViewVersion = field(default_factory=ViewVersion)
    # How many of the newest NOISE_QUIET_SCAN unread came quietly (SPEC 17 noise budget).
    quiet: int = 0


@dataclass(frozen=True)
class MarkReadResult:
    marked: int
    unread_count: int


@dataclass(frozen=True)
class PublishResult:
    id: str
    recipients: int
    cursor: int
    created_at_ms: int
    # The inboxes it reached ("u:<id>", "r:<id>"): rules check them against the database.
    subscribers: tuple[str, ...] = ()
    # True when a rule's reminder raised the same notification again (in the inboxes it
    # reached when first published) instead of publishing a new one.
    reraised: bool = False
    # True when an Idempotency-Key found this publish made before: nothing was delivered
    # again, and this is the first one's result (without its subscribers).
    replayed: bool = False
    # True when its key flaps (SPEC 17): no new notification; the latest one of the key (`id`,
    # in `recipients` inboxes) was raised again quietly, and nobody was notified.
    flapping: bool = False

    @property
    def created_at(self) -> datetime:
        return ms_to_datetime(self.created_at_ms)


@dataclass(frozen=True)
class ExpirySweepReport:
    """What the expiry sweep removed, and in how many Redis calls (it adds up over warehouses)."""

    notifications: int = 0
    inbox_entries: int = 0
    read_marks: int = 0
    calls: int = 0

    def __add__(self, other: ExpirySweepReport) -> ExpirySweepReport:
        return ExpirySweepReport(
            self.notifications + other.notifications,
            self.inbox_entries + other.inbox_entries,
            self.read_marks + other.read_marks,
            self.calls + other.calls,
        )

    def __str__(self) -> str:
        return (
            f"removed {self.notifications} expired notifications, {self.inbox_entries} inbox "
            f"entries and {self.read_marks} read marks in {self.calls} Redis calls"
        )
