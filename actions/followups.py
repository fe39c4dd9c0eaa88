"""Reminders until claimed and the e-mail when nobody claims it (SPEC 14).

Publishing indexes a notification whose type reminds or e-mails in its warehouse's reminders
zset (`after_publish`, a listener of notifications.hooks.Published). Beat (`pass_all`, every
ALERT_REMINDER_SECONDS) pops the due entries of each warehouse by score, ALERT_REMINDER_BATCH
per Redis call and at most ALERT_REMINDER_BATCHES calls per warehouse per tick, never scanning
alerts (lua/remind.lua): a reminder of an alert still open is recorded (`reminded`), told to open
streams (`event: reminder`) and pushed again; an e-mail is written to the outbox (one per
alert: its id is derived from the alert's), and the entries of a call's e-mails are removed
together once written.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils.translation import gettext

from config import timestamps
from directory import cache as directory
from notifications import lifecycle_store
from notifications.domain import Notification, Severity
from notifications.hooks import Published
from notifications.lifecycle_store import FollowUp
from outbox import services as outbox
from push import dispatch as push_dispatch
from shifts import selectors as shifts
from subscriptions.models import MessageType, Subscription, Warehouse

from . import mail

logger = logging.getLogger(__name__)

# Namespace of the outbox ids of unclaimed-alert e-mails: one per (warehouse, notification).
EMAIL_IDS = uuid.UUID("6f1c2a52-7d0e-4d55-9a57-31d7d1c0e5a1")


# What a publish's follow-ups are made from: the fields of its message type, in this order.
_FOLLOW_UPS = ("remind_every_seconds", "remind_max", "email_after_seconds")


def after_publish(published: Published) -> None:
    """Index the first reminder and the e-mail of a new notification whose type has them."""
    notification = published.notification
    found = directory.message_type_values(notification.message_type, _FOLLOW_UPS)
    if found is None:
        return
    every, most, email_after = found
    due: dict[str, int] = {}
    if every and most > 0:
        due["r0"] = notification.created_at_ms + every * 1000
    if email_after:
        due["e"] = notification.created_at_ms + email_after * 1000
    lifecycle_store.schedule_followups(notification.warehouse, notification.id, due)


def _rules() -> dict[str, list[int]]:
    """{type code: [interval ms, most reminders]} of the types that remind."""
    rows = MessageType.objects.filter(remind_every_seconds__isnull=False).values_list(
        "code", "remind_every_seconds", "remind_max"
    )
    return {code: [int(every or 0) * 1000, most] for code, every, most in rows}


def pass_warehouse(
    warehouse_id: int, *, at_ms: int | None = None, rules: dict[str, list[int]] | None = None
) -> dict[str, int]:
    """Send what is due in one warehouse, in at most ALERT_REMINDER_BATCHES bounded calls."""
    now = timestamps.now_ms() if at_ms is None else at_ms
    rules = _rules() if rules is None else rules
    limit = settings.ALERT_REMINDER_BATCH
    counts = {"reminded": 0, "emailed": 0}
    known = _Known(warehouse_id)
    for _ in range(settings.ALERT_REMINDER_BATCHES):
        read, found = lifecycle_store.run_followups(
            warehouse_id,
            now_ms=now,
            limit=limit,
            lease_ms=int(settings.OUTBOX_LEASE_SECONDS * 1000),
            rules=rules,
        )
        handed_over: list[str] = []
        try:
            for follow_up in found:
                if follow_up.kind == "r":
                    _push_again(follow_up)
                    counts["reminded"] += 1
                elif follow_up.kind == "e":
                    counts["emailed"] += _hand_over_email(known, follow_up)
                    handed_over.append(follow_up.notification_id)
        finally:
            # The e-mails written (or found written) leave the index together, in one call.
            lifecycle_store.followups_done(warehouse_id, "e", handed_over)
        if read < limit:
            break
    return counts


def pass_all(*, at_ms: int | None = None) -> dict[str, int]:
    """What Celery beat runs: every warehouse, each bounded (see pass_warehouse)."""
    rules = _rules()
    total = {"reminded": 0, "emailed": 0}
    for warehouse_id in Warehouse.objects.values_list("id", flat=True):
        for name, n in pass_warehouse(warehouse_id, at_ms=at_ms, rules=rules).items():
            total[name] += n
    return total


def _severity(follow_up: FollowUp) -> str:
    state = follow_up.state or {}
    return str(state.get("severity") or follow_up.content.get("severity") or Severity.INFO)


def _push_again(follow_up: FollowUp) -> None:
    notification = Notification(**follow_up.content)
    push_dispatch.again(
        notification, severity=_severity(follow_up), status="open", inboxes=follow_up.inboxes
    )


def email_recipients(
    *, warehouse_id: int, message_type: MessageType, inboxes: Sequence[str], critical: bool
) -> list[str]:
    """The addresses of the escalation role's members (else of the subscribed roles', else of
    the roles whose inboxes have it) who are active, have an address and are on shift there
    now (critical: all of them), sorted, each once."""
    if message_type.escalation_role_id is not None:
        role_ids = [message_type.escalation_role_id]
    else:
        role_ids = list(
            Subscription.objects.filter(
                message_type=message_type, warehouse_id=warehouse_id, role__isnull=False
            ).values_list("role_id", flat=True)
        ) or [int(i[2:]) for i in inboxes if i.startswith("r:")]
    users = dict(
        User.objects.filter(groups__in=role_ids, is_active=True)
        .exclude(Q(email="") | Q(email__isnull=True))
        .values_list("id", "email")
        .distinct()
    )
    if not critical and users:
        with directory.request_scope():
            on = shifts.on_shift_user_ids(
                warehouse_id=warehouse_id, user_ids=users, at=timestamps.now()
            )
        users = {pk: address for pk, address in users.items() if pk in on}
    return sorted(set(users.values()))


class _Known:
    """What one pass looks up in the database once: the warehouse, message types, and the
    recipients of each (type, critical or not), so e-mails cost no queries each but the row."""

    def __init__(self, warehouse_id: int) -> None:
        self.warehouse = Warehouse.objects.filter(pk=warehouse_id).first()
        self.types: dict[str, MessageType | None] = {}
        self.recipients: dict[tuple[str, bool, tuple[str, ...]], list[str]] = {}

    def message_type(self, code: str) -> MessageType | None:
        if code not in self.types:
            self.types[code] = MessageType.objects.filter(code=code).first()
        return self.types[code]

    def to(self, message_type: MessageType, inboxes: Sequence[str], critical: bool) -> list[str]:
        roles = () if message_type.escalation_role_id else tuple(sorted(inboxes))
        key = (message_type.code, critical, roles)
        if key not in self.recipients and self.warehouse is not None:
            self.recipients[key] = email_recipients(
                warehouse_id=self.warehouse.pk,
                message_type=message_type,
                inboxes=inboxes,
                critical=critical,
            )
        return self.recipients.get(key, [])


def _hand_over_email(known: _Known, follow_up: FollowUp) -> int:
    """Write the e-mail to the outbox once (its id comes from the alert: a second hand-over
    after a worker died finds it written); the caller then takes the entry out. 1 when
    written now."""
    message_type = known.message_type(follow_up.content["message_type"])
    warehouse = known.warehouse
    written = 0
    if message_type is not None and warehouse is not None:
        critical = _severity(follow_up) == Severity.CRITICAL
        to = known.to(message_type, follow_up.inboxes, critical)
        if to:
            written = _write_email(warehouse, message_type, follow_up, to)
    return written


def _write_email(
    warehouse: Warehouse, message_type: MessageType, follow_up: FollowUp, to: list[str]
) -> int:
    content = follow_up.content
    minutes = max(1, round((message_type.email_after_seconds or 0) / 60))
    subject = gettext("[%(warehouse)s] Nobody has claimed: %(title)s") % {
        "warehouse": warehouse.code,
        "title": content["title"],
    }
    lines = [
        gettext("%(type)s in %(warehouse)s, %(severity)s, open for %(minutes)d min or more:")
        % {
            "type": message_type.display_name(settings.LANGUAGE_CODE),
            "warehouse": f"{warehouse.code} {warehouse.name}",
            "severity": _severity(follow_up),
            "minutes": minutes,
        },
        "",
        content["title"],
        content.get("body") or "",
    ]
    payload: dict[str, Any] = {
        "to": to,
        "subject": subject.replace("\n", " ")[:200],
        "body": "\n".join(lines).strip() + "\n",
        "warehouse": warehouse.pk,
        "notification": follow_up.notification_id,
    }
    message_id = uuid.uuid5(EMAIL_IDS, f"{warehouse.pk}:{follow_up.notification_id}")
    try:
        with transaction.atomic():
            outbox.enqueue(kind=mail.EMAIL, payload=payload, message_id=message_id)
    except IntegrityError:
        return 0  # written by an earlier pass whose worker died before removing the entry
    return 1
