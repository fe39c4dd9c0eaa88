"""Writes of notices (SPEC 15): publish and edit, acknowledge.

Publishing goes through the core's path (notifications.services.publish) with the audience as
`extra_inboxes` (its roles' and users' inboxes, whether or not they subscribe to NOTICE, as a
handover reaches its role), under an Idempotency-Key of (notice, version): the notification
of a version is made once however often it is tried. The notice's row is written first and
committed; its notification follows the commit. Redis is asked first (a PING), so a request
made while Redis is down is refused (503) with nothing written; should Redis fail in the short
window after the commit, the notice stands with `published_version` behind `version`, and
beat's next pass (notices/followups.py) publishes it.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import IntegrityError, transaction
from django.db.models import F, Value
from django.utils.translation import gettext as _

from config import timestamps
from config.errors import Conflict, NotFound
from config.redis import REDIS_UNAVAILABLE, get_redis
from directory import cache as directory
from notifications.domain import PublishResult
from notifications.services import PublishError, mark_read, publish
from subscriptions.models import MessageType, Warehouse

from . import selectors
from .models import Notice, NoticeAck, NoticeNotification

logger = logging.getLogger(__name__)

NOTICE_TYPE = "NOTICE"


class VersionConflict(Conflict):
    """The acknowledged version is not the notice's current one (409, with `version`)."""

    default_code = "version_conflict"


def notice_type() -> MessageType:
    """The NOTICE type, from the directory's per-process cache (no query in steady state); made
    by a migration, made (or made active) again here if someone deleted (or deactivated) it."""
    held = directory.message_type(NOTICE_TYPE)
    if held is not None and held.is_active:
        return held
    found, _created = MessageType.objects.get_or_create(
        code=NOTICE_TYPE,
        defaults={"name": "须知", "name_en": "Notice", "default_ttl_seconds": 7 * 24 * 3600},
    )
    if not found.is_active:
        found.is_active = True
        found.save(update_fields=["is_active"])  # a save: the directory's signal drops its copy
    return found


def audience_inboxes(notice: Notice) -> list[str]:
    """Its roles' and users' inboxes ("r:<id>", "u:<id>"): what a publish reaches. One query
    (the two link tables in one UNION ALL), whatever the audience's size."""
    roles = Notice.roles.through.objects.filter(notice_id=notice.pk).values_list(
        Value("r"), "group_id"
    )
    users = Notice.users.through.objects.filter(notice_id=notice.pk).values_list(
        Value("u"), "user_id"
    )
    return sorted({f"{kind}:{pk}" for kind, pk in roles.union(users, all=True)})


def _redis_reachable() -> None:
    """Raise Redis's error (the API answers 503) before anything is written."""
    get_redis().ping()


def _publish(**arguments: Any) -> PublishResult:
    """publish() of a NOTICE: the type by its code, as any alert's, from the directory this
    process holds (no round trip of its own); made again first only if it is missing or
    inactive (someone deleted or deactivated it)."""
    try:
        return publish(message_type=NOTICE_TYPE, **arguments)
    except PublishError as exc:
        if exc.field != "message_type":
            raise
    return publish(message_type=notice_type(), **arguments)


def publish_current(*, notice_id: int, quiet: bool = False) -> bool:
    """Publish the notice's current version to its audience unless it went out already (or the
    notice is closed, or has no audience yet: its roles and users are saved after its row, and
    it goes out once it has them). With `quiet`, a Redis failure is logged and left to beat's
    next pass. True when it was published now."""
    notice = (
        Notice.objects.filter(pk=notice_id, is_closed=False, published_version__lt=F("version"))
        .only("pk", "warehouse_id", "title", "body", "severity", "version")
        .first()
    )
    if notice is None:  # gone, closed, or this version went out already
        return False
    inboxes = audience_inboxes(notice)
    if not inboxes:
        return False
    try:
        result = _publish(
            warehouse=notice.warehouse_id,
            title=notice.title,
            body=notice.body,
            data={"notice_id": notice.pk, "version": notice.version},
            severity=notice.severity,
            extra_inboxes=inboxes,
            idempotency_key=f"notice-{notice.pk}-v{notice.version}",
            idempotency_scope="notices",
        )
    except REDIS_UNAVAILABLE:
        if not quiet:
            raise
        logger.warning("Notice %s v%s: not published now (Redis)", notice.pk, notice.version)
        return False
    record_notification(notice_id=notice.pk, version=notice.version, notification_id=result.id)
    Notice.objects.filter(pk=notice.pk, published_version__lt=notice.version).update(
        published_version=notice.version, notification_id=result.id
    )
    return True


def record_notification(
    *, notice_id: int, version: int, notification_id: str, reminder: bool = False
) -> None:
    """Keep a NOTICE notification published for the notice (once however often it is asked):
    acknowledging reads it."""
    NoticeNotification.objects.bulk_create(
        [
            NoticeNotification(
                notice_id=notice_id,
                version=version,
                notification_id=notification_id,
                reminder=reminder,
            )
        ],
        ignore_conflicts=True,
    )


def _publish_after_commit(notice_id: int) -> None:
    transaction.on_commit(lambda: publish_current(notice_id=notice_id, quiet=True))


def after_admin_save(notice: Notice) -> None:
    """Once the admin saved a notice and its roles and users: publish it after the commit."""
    _publish_after_commit(notice.pk)


def notice_create(
    *,
    user: User,
    warehouse: Warehouse,
    title: str,
    body: str,
    severity: str,
    roles: Sequence[Group],
    users: Sequence[User],
    requires_ack: bool = True,
    due_at: dt.datetime | None = None,
    escalation_role: Group | None = None,
) -> Notice:
    """Publish a new notice (the API; the caller checked `add_notice`)."""
    _redis_reachable()
    with transaction.atomic():
        notice = Notice(
            warehouse=warehouse,
            title=title,
            body=body,
            severity=severity,
            requires_ack=requires_ack,
            due_at=due_at,
            escalation_role=escalation_role,
            created_by=user,
        )
        notice.save()
        notice.roles.set(roles)
        notice.users.set(users)
        _publish_after_commit(notice.pk)
    notice.refresh_from_db()
    return notice


EDITABLE = (
    "title",
    "body",
    "severity",
    "requires_ack",
    "due_at",
    "escalation_role",
    "is_closed",
)


def notice_update(*, notice_id: int, changes: dict[str, Any]) -> Notice:
    """Edit a notice (the API; the caller checked `change_notice`). A changed title or body
    makes a new version (Notice.save()), published again; `roles` / `users` replace the
    audience."""
    _redis_reachable()
    with transaction.atomic():
        notice = Notice.objects.select_for_update().filter(pk=notice_id).first()
        if notice is None:
            raise NotFound(_("No such notice."))
        for name in EDITABLE:
            if name in changes:
                setattr(notice, name, changes[name])
        notice.save()
        if "roles" in changes:
            notice.roles.set(changes["roles"])
        if "users" in changes:
            notice.users.set(changes["users"])
        _publish_after_commit(notice.pk)
    notice.refresh_from_db()
    return notice


# The most notifications of one notice an acknowledgement reads (the newest): its versions'
# and their reminders, far fewer in practice.
MAX_READ = 200


def notice_ack(*, user: User, notice_id: int, version: int) -> dt.datetime:
    """Record that the user read `version` of the notice, once: the time of the first
    acknowledgement (a repeat, or two taps at once, keep it). One INSERT when new. NotFound
    outside the audience; VersionConflict when `version` is not the current one.

    Then the notice's notifications (this version's, the earlier ones' and their reminders)
    are read for the user: one thing to clear (SPEC 15). Should Redis fail there, its error
    is raised (the API answers 503) and the acknowledgement stands: the repeat reads them."""
    notice = (
        Notice.objects.filter(pk=notice_id)
        .only("pk", "warehouse_id", "version", "text_hash", "notification_id")
        .first()
        if 0 < notice_id < 2**63
        else None
    )
    if notice is None or not selectors.in_audience(user=user, notice=notice):
        raise NotFound(_("No such notice for you."))
    if version != notice.version:
        raise VersionConflict(
            _("This is not the notice's current version (%(version)d); read it again.")
            % {"version": notice.version},
            extra={"version": notice.version},
        )
    acked_at = _record_ack(user=user, notice=notice)
    _read_notifications(user=user, notice=notice)
    return acked_at


def _record_ack(*, user: User, notice: Notice) -> dt.datetime:
    now = timestamps.now()
    try:
        with transaction.atomic():
            NoticeAck.objects.create(
                notice_id=notice.pk,
                version=notice.version,
                user_id=user.pk,
                acked_at=now,
                text_hash=notice.text_hash,
            )
    except IntegrityError:  # acknowledged before (or by the other of two taps): the first stands
        return NoticeAck.objects.values_list("acked_at", flat=True).get(
            notice_id=notice.pk, version=notice.version, user_id=user.pk
        )
    return now


def _read_notifications(*, user: User, notice: Notice) -> None:
    """Read for the user the notice's notifications up to its current version (those the user
    cannot see are left alone by mark_read)."""
    ids = list(
        NoticeNotification.objects.filter(notice_id=notice.pk, version__lte=notice.version)
        .order_by("-pk")
        .values_list("notification_id", flat=True)[:MAX_READ]
    )
    if notice.notification_id and notice.notification_id not in ids:
        ids.append(notice.notification_id)  # published before the notifications were kept
    if ids:
        mark_read(user=user, warehouse_id=notice.warehouse_id, ids=ids)
