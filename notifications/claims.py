"""Claims that expire (SPEC 17): an alert claimed a type's `claim_timeout_seconds` with no
progress (no action run, no resolve) is let go by the system.

A claim indexes the alert in its warehouse's claims zset (`after_change`, a listener of
notifications.hooks.Changed), due a timeout after the claim. Beat (`expire_all`, every
CLAIM_EXPIRY_SECONDS) pops the due entries of each warehouse by score, CLAIM_EXPIRY_BATCH per
Redis call and at most CLAIM_EXPIRY_BATCHES calls per warehouse per tick (lua/expire_claims.lua):
one still claimed and with no action run for the timeout is open again (history
`claim_expired`, by null; unread again as after a release), its holder's streams get `event:
claim_expired`, and features are told (hooks.ClaimExpired: push sends it again to the members
on shift). One with an action run since is due again a timeout after that run.
"""

from __future__ import annotations

import json
import logging

from django.conf import settings

from config import timestamps
from config.redis import as_text, get_redis
from directory import cache as directory
from subscriptions.models import MessageType, Warehouse

from . import hooks, keys
from .domain import InboxItem, Lifecycle, Notification, Status
from .readmodel import layout, scripts

logger = logging.getLogger(__name__)


def after_change(changed: hooks.Changed) -> None:
    """A claim of a type whose claims expire: its clock starts (the claim's time)."""
    item = changed.item
    if changed.step != "claim" or item is None or item.state is None:
        return
    state = item.state
    if state.status != Status.CLAIMED or state.claimed_at_ms is None:
        return
    message_type = directory.message_type(item.notification.message_type)
    timeout = None if message_type is None else message_type.claim_timeout_seconds
    if timeout:
        get_redis().zadd(
            keys.claims(changed.warehouse_id),
            {item.notification.id: state.claimed_at_ms + timeout * 1000},
        )


def _timeouts() -> dict[str, int]:
    """{type code: claim timeout in ms} of the types whose claims expire."""
    return {
        code: seconds * 1000
        for code, seconds in MessageType.objects.filter(
            claim_timeout_seconds__isnull=False
        ).values_list("code", "claim_timeout_seconds")
    }


def expire_warehouse(
    warehouse_id: int, *, at_ms: int | None = None, timeouts: dict[str, int] | None = None
) -> int:
    """Let go of the warehouse's claims that are due, in bounded calls; how many were let go."""
    now = timestamps.now_ms() if at_ms is None else at_ms
    timeouts = _timeouts() if timeouts is None else timeouts
    limit = settings.CLAIM_EXPIRY_BATCH
    expired = 0
    for _ in range(settings.CLAIM_EXPIRY_BATCHES):
        reply = scripts.EXPIRE_CLAIMS(
            keys=[*layout.warehouse_keys(warehouse_id, now), keys.claims(warehouse_id)],
            args=[now, limit, json.dumps(timeouts)],
        )
        for notification_id, holder, cursor, content, state, route in reply[1:]:
            expired += 1
            item = InboxItem(
                Notification.from_json(content), int(cursor), False, Lifecycle.from_json(state)
            )
            hooks.announce(
                hooks.ClaimExpired(
                    item=item,
                    holder_id=int(holder),
                    inboxes=tuple(as_text(route).split()[1:]),
                )
            )
            logger.info("Claim of %s by user %s expired", as_text(notification_id), holder)
        if int(reply[0]) < limit:
            break
    return expired


def expire_all(*, at_ms: int | None = None) -> int:
    """expire_warehouse over every warehouse (what Celery beat runs)."""
    timeouts = _timeouts()
    if not timeouts:
        return 0
    return sum(
        expire_warehouse(warehouse_id, at_ms=at_ms, timeouts=timeouts)
        for warehouse_id in Warehouse.objects.values_list("id", flat=True)
    )
