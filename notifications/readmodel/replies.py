"""The read-model scripts' replies, decoded by name (each script's header says its shape)."""

from __future__ import annotations

from typing import Any, NamedTuple

from config.redis import as_text

from ..domain import InboxItem, Lifecycle, Notification, Severity, ViewVersion

# Per notification, in every reply that carries some (read_model.lua item_of).
ITEM = ("cursor", "content", "read", "state", "snoozed_until")
# The head of a view's reply (read_model.lua view_head).
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
# list.lua's head after VIEW_HEAD.
PAGE_HEAD = ("next_since", "has_more", "oldest")
# mark_read.lua / mark_all.lua after VIEW_HEAD.
MARK_HEAD = ("marked",)
# A change's reply (read_model.lua answer): code, ITEM, extra.
CHANGE = ("code", *ITEM, "extra")


def named(names: tuple[str, ...], values: list[Any]) -> dict[str, Any]:
    return dict(zip(names, values[: len(names)], strict=True))


def item(values: dict[str, Any]) -> InboxItem | None:
    """An InboxItem from ITEM values (None when its content is gone: swept meanwhile)."""
    if values["content"] is None:
        return None
    return InboxItem(
        Notification.from_json(values["content"]),
        int(values["cursor"]),
        bool(int(values["read"])),
        Lifecycle.from_json(values["state"]) if values["state"] else None,
        int(float(values["snoozed_until"])) if values["snoozed_until"] else None,
    )


def items(flat: list[Any]) -> list[InboxItem]:
    found = []
    for start in range(0, len(flat), len(ITEM)):
        one = item(named(ITEM, flat[start : start + len(ITEM)]))
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
        return {severity: int(self.head[str(severity.value)]) for severity in Severity}


def view(reply: list[Any]) -> View:
    return View(named(VIEW_HEAD, reply), reply[len(VIEW_HEAD) :])
