"""Publishing's one retry loop: each reply of the publish script that wrote nothing asks for one
remedy, and one budget bounds how often a publish applies each.

The publish script (readmodel/lua/publish.lua) writes only when what the caller brings is
current; otherwise its reply (readmodel.replies.PublishReply) says what was not. Each such
reply has one remedy (REMEDIES), applied at most BUDGET times per publish; a reply asking for
it once more raises that remedy's error, a 503 with Retry-After over the API:

- DIRECTORY_MOVED: REFRESH_DIRECTORY, resolve the type and warehouse again from a directory
  read afresh (once; then DirectoryChanging). Within a request that answers from the held
  directory, the request answers again instead (directory/confirmed_writes.py);
- NOT_MIRRORED, LOST_MEMBERS: REBUILD_MIRROR, the warehouse's subscriber sets from the
  database (once; then SubscribersUnavailable, a Redis ConnectionError that rule runs retry);
- STALE_SUBSCRIBERS: TAKE_SUBSCRIBERS, the members the script sent back (twice; then
  StaleSubscribers).

So a publish calls its script at most five times (once, and once after each remedy), whatever
Redis answers. A Redis error is not retried (a script that timed out may have written).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from django.utils.translation import gettext

from config import idempotency
from config.errors import Unavailable
from directory.confirmed_writes import Write
from subscriptions import services as subscription_services

from . import store
from .domain import Notification
from .readmodel.replies import PublishReply, PublishStatus

logger = logging.getLogger(__name__)


class Remedy(StrEnum):
    """What a publish does about one reply that wrote nothing, before it tries again."""

    REFRESH_DIRECTORY = "refresh_directory"
    REBUILD_MIRROR = "rebuild_mirror"
    TAKE_SUBSCRIBERS = "take_subscribers"


# The one remedy of each reply that wrote nothing.
REMEDIES: Mapping[PublishStatus, Remedy] = MappingProxyType(
    {
        PublishStatus.DIRECTORY_MOVED: Remedy.REFRESH_DIRECTORY,
        PublishStatus.NOT_MIRRORED: Remedy.REBUILD_MIRROR,
        PublishStatus.LOST_MEMBERS: Remedy.REBUILD_MIRROR,
        PublishStatus.STALE_SUBSCRIBERS: Remedy.TAKE_SUBSCRIBERS,
    }
)
# The replies that end a publish: it was stored, now or by the same request before.
DONE = frozenset({PublishStatus.DELIVERED, PublishStatus.FLAPPING, PublishStatus.REPLAYED})

# How many times one publish may apply each remedy. A fresh directory is read, confirmed, so
# it cannot move again under the same publish; a rebuild that left the pair unmirrored would
# do no better a second time; a set written again twice while publishing is being changed
# right now (an admin's bulk subscribe), and the caller had better come back a little later.
BUDGET: Mapping[Remedy, int] = MappingProxyType(
    {Remedy.REFRESH_DIRECTORY: 1, Remedy.REBUILD_MIRROR: 1, Remedy.TAKE_SUBSCRIBERS: 2}
)


class DirectoryChanging(Unavailable):
    """The publish's directory moved on more often than its budget allows: try again soon."""

    default_code = "directory_changing"


@dataclass(frozen=True)
class Publication:
    """A notification ready to go out, as resolved from the directory the publish holds."""

    notification: Notification
    message_type_id: int
    escalate_at_ms: int | None = None
    guard: idempotency.Guard | None = None
    extra_inboxes: tuple[str, ...] = ()
    silence_id: int | None = None  # the planned silence holding it back (SPEC 17)

    @property
    def pair(self) -> tuple[int, int]:
        return (self.notification.warehouse, self.message_type_id)


def deliver(write: Write, prepare: Callable[[], Publication]) -> tuple[Publication, store.Delivery]:
    """`prepare()` (resolve and validate, from the directory as `write` holds it), then one try
    of the script after another, each reply that wrote nothing given its remedy, until one
    is DONE or a remedy's budget is spent (its 503 error is raised; nothing was delivered)."""
    applied = dict.fromkeys(Remedy, 0)  # how often each remedy was applied so far
    publication: Publication | None = None
    while True:
        if publication is None:
            publication = write.confirmed(prepare)
        if publication is None:  # refused from a directory that had moved on
            reply = PublishReply(PublishStatus.DIRECTORY_MOVED)
        else:
            delivery = store.deliver(
                publication.notification,
                message_type_id=publication.message_type_id,
                escalate_at_ms=publication.escalate_at_ms,
                guard=publication.guard,
                extra_inboxes=publication.extra_inboxes,
                silence_id=publication.silence_id,
            )
            reply = delivery.reply
            if reply.status is not PublishStatus.DIRECTORY_MOVED:
                write.settle()
            if reply.status in DONE:
                return publication, delivery
        remedy = REMEDIES[reply.status]
        if applied[remedy] >= BUDGET[remedy]:
            raise _spent(remedy, tries=applied[remedy] + 1)
        applied[remedy] += 1
        logger.debug("Publishing: %s, so %s", reply.status, remedy)
        if remedy is Remedy.REFRESH_DIRECTORY or publication is None:  # (None: refused)
            write.refresh()
            publication = None  # resolved again, from the fresh directory
        elif remedy is Remedy.REBUILD_MIRROR:
            # Inside a transaction, what it changed is mirrored at its commit, never from
            # here: a rollback must not leave Redis holding subscriptions that never were.
            subscription_services.rebuild_warehouse(
                publication.notification.warehouse,
                skip=subscription_services.uncommitted_pairs(),
            )
        else:
            store.remember_subscribers(publication.pair, reply)


def _spent(remedy: Remedy, *, tries: int) -> Exception:
    """The 503 error of a publish whose reply asked for `remedy` once more than its budget."""
    if remedy is Remedy.REBUILD_MIRROR:
        return store.SubscribersUnavailable(
            "The subscriptions of this warehouse are being restored in Redis; retry shortly."
        )
    if remedy is Remedy.TAKE_SUBSCRIBERS:
        return store.StaleSubscribers(
            gettext(
                "The subscribers changed %(attempts)d times while publishing; please retry shortly."
            )
            % {"attempts": tries}
        )
    return DirectoryChanging(
        gettext(
            "The warehouses or message types changed %(attempts)d times while publishing; "
            "please retry shortly."
        )
        % {"attempts": tries}
    )
