"""One user's view of a warehouse: pages, the unread summary, the snoozed list, marking read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings

from directory import cache as directory

from .. import keys
from ..domain import IfNoneMatch, InboxItem, InboxPage, MarkReadResult, NotModified, UnreadSummary
from . import layout, replies, scripts
from .replies import View


def visible_inboxes(warehouse_id: int, user_id: int, role_ids: Sequence[int]) -> list[str]:
    """The inboxes a user sees in a warehouse: their own, then one per role."""
    return keys.inboxes(warehouse_id, [f"u:{user_id}", *(f"r:{role_id}" for role_id in role_ids)])


def user_keys(warehouse_id: int, user_id: int, role_ids: Sequence[int], now_ms: int) -> list[str]:
    """The warehouse's layout, then the inboxes the user sees."""
    return [
        *layout.warehouse_keys(warehouse_id, now_ms),
        *visible_inboxes(warehouse_id, user_id, role_ids),
    ]


def _condition(if_none_match: IfNoneMatch | None) -> list[str]:
    if if_none_match is None:
        return ["", "", ""]
    return [if_none_match.before, if_none_match.after, " ".join(if_none_match.tags)]


def _run(
    script: scripts.Composed,
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    now_ms: int,
    args: Sequence[Any],
    confirmed: bool = True,
) -> Any:
    keys_ = user_keys(warehouse_id, user_id, role_ids, now_ms)
    all_args = [now_ms, user_id, *args]
    if not confirmed:
        return script(keys=keys_, args=all_args)
    # A poll answered from the directory's held snapshot confirms it in this same round trip.
    call: Callable[[Any], None] = lambda batch: batch.script(script, keys=keys_, args=all_args)  # noqa: E731
    [reply] = directory.read_confirmed(directory.snapshot(), call)
    return reply


def list_inbox(
    *,
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    since: int,
    limit: int,
    include_read: bool,
    now_ms: int,
    with_oldest: bool = False,
    if_none_match: IfNoneMatch | None = None,
) -> InboxPage | NotModified:
    """A page after `since` (lua/list.lua); `with_oldest`: also the oldest slot the user's
    inboxes hold; NotModified when one of `if_none_match`'s ETags is still the page's."""
    reply = _run(
        scripts.LIST,
        warehouse_id,
        user_id,
        role_ids,
        now_ms,
        [
            settings.NOTIFICATION_POLL_EXPIRED_SCAN,
            *_condition(if_none_match),
            since,
            limit,
            "1" if include_read else "0",
            settings.NOTIFICATION_POLL_SCAN_BEYOND_PAGE,
            "1" if with_oldest else "0",
            settings.NOISE_BUDGET_PER_HOUR,
        ],
    )
    found = replies.view(reply)
    if found.not_modified:
        return NotModified(found.version)
    page = replies.named(replies.PAGE_HEAD, found.rest)
    oldest = replies.as_text(page["oldest"])
    return InboxPage(
        items=replies.items(
            found.rest[len(replies.PAGE_HEAD) :], quiet=replies.positions(page["quiet"])
        ),
        unread_count=found.unread,
        next_since=int(page["next_since"]),
        version=found.version,
        has_more=bool(int(page["has_more"])),
        oldest=int(oldest) if oldest else None,
    )


def latest_unread(
    *,
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    count: int,
    now_ms: int,
    if_none_match: IfNoneMatch | None = None,
) -> UnreadSummary | NotModified:
    """The unread summary (lua/unread.lua); NotModified when one of `if_none_match`'s ETags
    is still the summary's."""
    reply = _run(
        scripts.UNREAD,
        warehouse_id,
        user_id,
        role_ids,
        now_ms,
        [
            settings.NOTIFICATION_POLL_EXPIRED_SCAN,
            *_condition(if_none_match),
            count,
            settings.NOISE_BUDGET_PER_HOUR,
            settings.NOISE_QUIET_SCAN,
        ],
    )
    found = replies.view(reply)
    if found.not_modified:
        return NotModified(found.version)
    head = replies.named(replies.SUMMARY_HEAD, found.rest)
    return UnreadSummary(
        unread_count=found.unread,
        latest=replies.items(
            found.rest[len(replies.SUMMARY_HEAD) :], quiet=replies.positions(head["quiet_items"])
        ),
        by_severity=found.by_severity,
        version=found.version,
        quiet=int(head["quiet"]),
    )


def snoozed_items(
    *, warehouse_id: int, user_id: int, role_ids: Sequence[int], count: int, now_ms: int
) -> list[InboxItem]:
    """The user's snoozed notifications they still see, earliest wake first (at most `count`)."""
    reply = _run(scripts.SNOOZED, warehouse_id, user_id, role_ids, now_ms, [count])
    return replies.items(reply)


def mark_read(
    *,
    warehouse_id: int,
    user_id: int,
    role_ids: Sequence[int],
    ids: Sequence[str] | None,
    now_ms: int,
) -> MarkReadResult:
    """Mark the given notification ids read for the user (lua/mark_read.lua), or all of them
    when ids is None (lua/mark_all.lua)."""
    script, args = (scripts.MARK_ALL, []) if ids is None else (scripts.MARK_READ, list(ids))
    reply = _run(
        script,
        warehouse_id,
        user_id,
        role_ids,
        now_ms,
        [settings.NOTIFICATION_POLL_EXPIRED_SCAN, *args],
    )
    found: View = replies.view(reply)
    mark = replies.named(replies.MARK_HEAD, found.rest)
    return MarkReadResult(marked=int(mark["marked"]), unread_count=found.unread)
