"""The read-model scripts' replies, decoded by name (each script's header says its shape)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from config.idempotency import Guard, Replay
from config.redis import as_text
from directory.confirmed_writes import MOVED
from subscriptions.store import token_count

from ..domain import InboxItem, Lifecycle, Notification, Severity, ViewVersion

# Per notification, in every reply that carries some (read_model/ item_of).
ITEM = ("cursor", "content", "read", "state", "snoozed_until")
# The head of a view's reply (read_model/ view_head).
VIEW_HEAD = (
    "status",
    "unread",
    "info",
    "warning",
    "critical",
    "sequence",
    "next_expiry",
    "read_version",
)
# Each severity with its count's field in VIEW_HEAD.
_SEVERITY_FIELDS = tuple((severity, str(severity.value)) for severity in Severity)
# list.lua's head after VIEW_HEAD.
PAGE_HEAD = ("next_since", "has_more", "oldest", "quiet")
# unread.lua's head after VIEW_HEAD.
SUMMARY_HEAD = ("quiet", "quiet_items")
# mark_read.lua / mark_all.lua after VIEW_HEAD.
MARK_HEAD = ("marked",)
# A change's reply (read_model/ answer): code, ITEM, extra.
CHANGE = ("code", *ITEM, "extra")


def named(names: tuple[str, ...], values: list[Any]) -> dict[str, Any]:
    return dict(zip(names, values[: len(names)], strict=True))


def item(values: dict[str, Any]) -> InboxItem | None:
    """An InboxItem from ITEM values by name (None when its content is gone: swept meanwhile)."""
    return _item(*(values[name] for name in ITEM))


def _item(
    cursor: Any, content: Any, read: Any, state: Any, snoozed_until: Any, quiet: bool = False
) -> InboxItem | None:
    """An InboxItem from ITEM values in ITEM's order (None when its content is gone)."""
    if content is None:
        return None
    return InboxItem(
        Notification.from_json(content),
        int(cursor),
        bool(int(read)),
        Lifecycle.from_json(state) if state else None,
        int(float(snoozed_until)) if snoozed_until else None,
        quiet,
    )


def positions(words: Any) -> set[int]:
    """A reply's space-separated 1-based positions, as a set."""
    return {int(word) for word in as_text(words or "").split()}


def items(flat: list[Any], quiet: Collection[int] = ()) -> list[InboxItem]:
    """The ITEM fields of `flat` as items; those at `quiet` positions (1-based) came quietly."""
    width = len(ITEM)
    if len(flat) % width:
        raise ValueError(f"a reply's items are {width} values each, not {len(flat)} in all")
    found = []
    for position, start in enumerate(range(0, len(flat), width), start=1):
        cursor, content, read, state, snoozed_until = flat[start : start + width]
        one = _item(cursor, content, read, state, snoozed_until, quiet=position in quiet)
        if one is not None:
            found.append(one)
    return found


class View(NamedTuple):
    """VIEW_HEAD decoded, the rest of the reply after it."""

    head: dict[str, Any]
    rest: list[Any]

    @property
    def not_modified(self) -> bool:
        return as_text(self.head["status"]) == "not modified"

    @property
    def version(self) -> ViewVersion:
        return ViewVersion(
            as_text(self.head["sequence"]),
            as_text(self.head["next_expiry"]),
            as_text(self.head["read_version"]),
        )

    @property
    def unread(self) -> int:
        return int(self.head["unread"])

    @property
    def by_severity(self) -> dict[str, int]:
        head = self.head
        return {severity: int(head[field]) for severity, field in _SEVERITY_FIELDS}


def view(reply: list[Any]) -> View:
    return View(named(VIEW_HEAD, reply), reply[len(VIEW_HEAD) :])


class PublishStatus(StrEnum):
    """What one call of lua/publish.lua did (its header's Returns). Only the first two wrote
    (or had written): each of the others names what the caller brought that was not current,
    and notifications/publishing.py gives each its one remedy."""

    DELIVERED = "delivered"  # {1, cursor}; cursor 0: nobody to deliver to, nothing to escalate
    # {2, cursor, id, inboxes, created_at}: the key flaps (SPEC 17); nothing new was stored, the
    # latest alert `id` of the key was raised again quietly at `cursor`.
    FLAPPING = "flapping"
    REPLAYED = "replayed"  # a request made before with the same Idempotency-Key: its answer
    DIRECTORY_MOVED = "directory_moved"  # {-2}: the caller's directory is no longer current
    NOT_MIRRORED = "not_mirrored"  # {-1}: Redis holds no token for the pair
    LOST_MEMBERS = "lost_members"  # {0, token, member...}: fewer members than its token says
    STALE_SUBSCRIBERS = "stale_subscribers"  # {0, token, member...}: the set was written since


@dataclass(frozen=True, slots=True)
class PublishReply:
    """lua/publish.lua's reply, decoded: `cursor` when DELIVERED, FLAPPING or REPLAYED, the
    set's `token` and `members` when they were sent back, the first attempt's `replay`; when
    FLAPPING (or replaying one), the alert raised again: `folded` (id, inboxes, created at)."""

    status: PublishStatus
    cursor: int = 0
    token: str = ""
    members: tuple[str, ...] = ()
    replay: Replay | None = None
    folded: Folded | None = None


class Folded(NamedTuple):
    """The latest alert of a flapping key, raised again instead of a new one."""

    id: str
    inboxes: int
    created_at_ms: int


def _folded(reply: Any) -> Folded:
    return Folded(as_text(reply[2]), int(reply[3]), int(reply[4]))


def publish_reply(reply: Any, guard: Guard) -> PublishReply:
    """The one decoding of lua/publish.lua's reply (KeyReused when the guard's key came with
    another request)."""
    replay = guard.replayed(reply)
    if replay is not None:  # the first attempt's answer, whatever changed since
        first = replay.reply
        folded = _folded(first) if int(first[0]) == 2 else None
        return PublishReply(
            PublishStatus.REPLAYED, cursor=int(first[1]), replay=replay, folded=folded
        )
    status = int(reply[0])
    if status == 1:
        return PublishReply(PublishStatus.DELIVERED, cursor=int(reply[1]))
    if status == 2:
        return PublishReply(PublishStatus.FLAPPING, cursor=int(reply[1]), folded=_folded(reply))
    if status == MOVED:
        return PublishReply(PublishStatus.DIRECTORY_MOVED)
    if status == -1:
        return PublishReply(PublishStatus.NOT_MIRRORED)
    if status == 0:
        token, members = as_text(reply[1]), tuple(as_text(m) for m in reply[2:])
        count = token_count(token)
        lost = count is not None and count != len(members)
        kind = PublishStatus.LOST_MEMBERS if lost else PublishStatus.STALE_SUBSCRIBERS
        return PublishReply(kind, token=token, members=members)
    raise ValueError(f"publish.lua answered {reply!r}")
