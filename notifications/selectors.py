"""Reads: what one user sees of one warehouse's notifications."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from config import metrics, timestamps
from directory import cache as directory

from . import lifecycle_store, store
from .domain import (
    Actor,
    Event,
    HistoryEntry,
    IfNoneMatch,
    InboxItem,
    InboxPage,
    NotModified,
    UnreadSummary,
    answered,
)
from .lifecycle_store import Snoozed
from .readmodel import quiet as quiet_store


def role_ids_of(user: AbstractBaseUser) -> list[int]:
    """The user's roles as of now: a user just added to a group sees its live notifications
    (from directory.cache's per-process cache, which every membership change invalidates)."""
    return directory.role_ids(user)


def users_to_tell(
    *, warehouse_id: int, notification_id: str, users: Sequence[AbstractBaseUser]
) -> set[int]:
    """The ids of those of `users` to tell loudly of the alert now (push, reminders): the read
    model's one rule (SPEC 17: unread for them, not snoozed, silenced or under their mute's
    floor, and not come quietly to them under NOISE_BUDGET_PER_HOUR), as their polls see it."""
    return quiet_store.to_tell(
        warehouse_id=warehouse_id,
        notification_id=notification_id,
        users=[
            (user.pk, [f"u:{user.pk}", *(f"r:{role}" for role in role_ids_of(user))])
            for user in users
        ],
        now_ms=timestamps.now_ms(),
        budget=settings.NOISE_BUDGET_PER_HOUR,
    )


# The look-back starts on a whole step, so that a list without `since` is the same answer (and
# ETag) for a minute instead of changing every millisecond.
LOOKBACK_STEP_MS = 60_000


def lookback_since(now_ms: int) -> int:
    """The cursor a list without `since` starts after: NOTIFICATION_LOOKBACK_SECONDS ago,
    rounded down to LOOKBACK_STEP_MS."""
    start = now_ms - settings.NOTIFICATION_LOOKBACK_SECONDS * 1000
    return store.cursor_at(start - start % LOOKBACK_STEP_MS)


def inbox_page(
    *,
    user: AbstractBaseUser,
    warehouse_id: int,
    since: int | None = None,
    limit: int = 50,
    include_read: bool = False,
    with_oldest: bool = False,
) -> InboxPage:
    """Notifications after the `since` cursor, oldest first, in one Redis round trip.

    Without `since`, the look-back is settings.NOTIFICATION_LOOKBACK_SECONDS. `with_oldest`:
    the page also says the oldest slot the user's inboxes hold (a stream's first page).
    """
    return answered(
        inbox_page_if_changed(
            user=user,
            warehouse_id=warehouse_id,
            since=since,
            limit=limit,
            include_read=include_read,
            with_oldest=with_oldest,
            if_none_match=None,
        )
    )


def inbox_page_if_changed(
    *,
    user: AbstractBaseUser,
    warehouse_id: int,
    since: int | None,
    limit: int,
    include_read: bool,
    if_none_match: IfNoneMatch | None,
    with_oldest: bool = False,
    role_ids: Sequence[int] | None = None,
) -> InboxPage | NotModified:
    """`inbox_page`, or NotModified when one of the client's ETags is still the page's: one
    round trip either way (the page is read only if the ETag is stale). `role_ids`: the
    user's roles when the caller read them for this request already."""
    now = timestamps.now_ms()
    if since is None:
        since = lookback_since(now)
    found = store.list_inbox(
        warehouse_id=warehouse_id,
        user_id=user.pk,
        role_ids=role_ids_of(user) if role_ids is None else role_ids,
        since=since,
        limit=limit,
        include_read=include_read,
        now_ms=now,
        with_oldest=with_oldest,
        if_none_match=if_none_match,
    )
    # Counted once answered: a read from a held directory that moved on is answered again.
    metrics.POLLS.labels("list").inc()
    return found


def unread_summary(*, user: AbstractBaseUser, warehouse_id: int) -> UnreadSummary:
    """The unread count and the newest unread notifications (newest first)."""
    return answered(
        unread_summary_if_changed(user=user, warehouse_id=warehouse_id, if_none_match=None)
    )


def unread_summary_if_changed(
    *,
    user: AbstractBaseUser,
    warehouse_id: int,
    if_none_match: IfNoneMatch | None,
    role_ids: Sequence[int] | None = None,
) -> UnreadSummary | NotModified:
    """`unread_summary`, or NotModified when one of the client's ETags is still its own.
    `role_ids`: the user's roles when the caller read them for this request already."""
    found = store.latest_unread(
        warehouse_id=warehouse_id,
        user_id=user.pk,
        role_ids=role_ids_of(user) if role_ids is None else role_ids,
        count=settings.NOTIFICATION_SUMMARY_SIZE,
        now_ms=timestamps.now_ms(),
        if_none_match=if_none_match,
    )
    metrics.POLLS.labels("unread").inc()
    return found


def history(
    *, user: AbstractBaseUser, warehouse_id: int, notification_id: str
) -> list[HistoryEntry] | None:
    """Its events, oldest first, starting with `published`; None when the user cannot see it
    (unknown, expired, or in none of their inboxes)."""
    found = lifecycle_store.history(
        warehouse_id=warehouse_id,
        notification_id=str(notification_id),
        actor=Actor(id=int(user.pk), username=user.get_username()),
        role_ids=role_ids_of(user),
        now_ms=timestamps.now_ms(),
    )
    if found is None:
        return None
    item, events = found
    return [HistoryEntry(Event.PUBLISHED, item.notification.created_at_ms), *events]


def snoozed(*, user: AbstractBaseUser, warehouse_id: int) -> list[InboxItem]:
    """The user's snoozed notifications they still see, earliest wake first (at most
    settings.NOTIFICATION_SNOOZED_LIST_MAX; bounded by how many they snoozed)."""
    return store.snoozed_items(
        warehouse_id=warehouse_id,
        user_id=user.pk,
        role_ids=role_ids_of(user),
        count=settings.NOTIFICATION_SNOOZED_LIST_MAX,
        now_ms=timestamps.now_ms(),
    )


def snoozed_past(*, warehouse_id: int, at_ms: int, limit: int) -> list[Snoozed]:
    """Alerts snoozed by anyone until after `at_ms` (a shift change), earliest wake first:
    id, title, severity, status, who snoozed (user id) and until when. Bounded: at most `limit`
    snoozes are read; those of expired or resolved alerts are left out, so fewer may come."""
    return lifecycle_store.snoozed_after(warehouse_id, at_ms=at_ms, limit=limit)


def inboxes_of(*, warehouse_id: int, notification_id: str) -> tuple[str, ...]:
    """The inboxes ("u:<id>", "r:<id>") a notification is in; () when it is gone."""
    return store.inboxes_of(warehouse_id, str(notification_id))
