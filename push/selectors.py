"""Reads of Web Push: which browsers an alert goes to, and the subscriptions of a user."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Q

from config import timestamps
from directory import cache as directory_cache
from notifications import selectors as notification_selectors
from shifts import selectors as shifts

from .models import PushSubscription


def subscriptions_reached(*, warehouse_id: int, inboxes: Sequence[str]) -> list[PushSubscription]:
    """Push subscriptions for this warehouse of the users the inboxes stand for: `u:<id>` the
    user, `r:<id>` every member of the role (membership as of now). Inactive users get none."""
    user_ids = [int(inbox[2:]) for inbox in inboxes if inbox.startswith("u:")]
    role_ids = [int(inbox[2:]) for inbox in inboxes if inbox.startswith("r:")]
    if not user_ids and not role_ids:
        return []
    return list(
        PushSubscription.objects.filter(
            Q(user_id__in=user_ids) | Q(user__groups__in=role_ids),
            warehouses=warehouse_id,
            user__is_active=True,
        )
        .select_related("user")
        .distinct()
        .order_by("pk")
    )


def told_loudly(
    subscriptions: Sequence[PushSubscription], *, warehouse_id: int, notification_id: str
) -> list[PushSubscription]:
    """Those of the subscriptions whose user the read model's one rule says to tell loudly of
    the alert now (SPEC 17; the same answer as their polls)."""
    if not subscriptions:
        return []
    users = list({s.user_id: s.user for s in subscriptions}.values())
    told = notification_selectors.users_to_tell(
        warehouse_id=warehouse_id, notification_id=notification_id, users=users
    )
    return [s for s in subscriptions if s.user_id in told]


def on_shift_only(
    subscriptions: Sequence[PushSubscription], *, warehouse_id: int
) -> list[PushSubscription]:
    """Those of the subscriptions whose user is on shift in the warehouse now (SPEC 13: Web
    Push reaches only members on shift; the schedule is cached, no query in steady state)."""
    with directory_cache.request_scope():  # the directory's version read once
        on = shifts.on_shift_user_ids(
            warehouse_id=warehouse_id,
            user_ids={s.user_id for s in subscriptions},
            at=timestamps.now(),
        )
    return [s for s in subscriptions if s.user_id in on]
