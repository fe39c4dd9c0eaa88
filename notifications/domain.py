"""Notification domain objects: frozen dataclasses converted to and from Redis by the store."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from config.timestamps import ms_to_datetime


@dataclass(frozen=True)
class Notification:
    """What is stored once per notification, however many inboxes it reaches."""

    id: str
    message_type: str
    warehouse: int
    title: str
    body: str
    data: dict[str, Any]
    created_at_ms: int
    expires_at_ms: int

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> Notification:
        return cls(**json.loads(raw))


@dataclass(frozen=True)
class InboxItem:
    """A notification as one user sees it: with its cursor and the user's own read state."""

    notification: Notification
    cursor: int
    read: bool


@dataclass(frozen=True)
class InboxPage:
    items: list[InboxItem]
    unread_count: int
    next_since: int


@dataclass(frozen=True)
class UnreadSummary:
    unread_count: int
    latest: list[InboxItem] = field(default_factory=list)


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

    @property
    def created_at(self) -> datetime:
        return ms_to_datetime(self.created_at_ms)


@dataclass(frozen=True)
class SweepReport:
    notifications: int = 0
    inbox_entries: int = 0
    read_marks: int = 0
    calls: int = 0

    def __add__(self, other: SweepReport) -> SweepReport:
        return SweepReport(
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
