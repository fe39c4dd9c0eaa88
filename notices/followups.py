"""Beat's pass over notices (SPEC 15): what failed to go out, reminders, escalations.

`pass_all` runs every NOTICE_PASS_SECONDS (notices/conf.py), each part bounded by
NOTICE_PASS_BATCH notices:

- **Publish what is behind**: a version whose notification did not go out (Redis failed just
  after the commit, or it was saved from code, which does not publish) is published now, under
  the same Idempotency-Key (never twice), once the notice has an audience.
- **Reminders**: for every shift that started in the last NOTICE_REMINDER_LOOKBACK_SECONDS in a
  warehouse with open notices, its role's members in a notice's audience who have not
  acknowledged its current version, and whose shift started after that version was made, get
  its notification again in their own inbox. The claim is a NoticeReminder row, unique per
  (notice, version, member, shift start), inserted with ON CONFLICT DO NOTHING and tagged with
  the pass's token: the rows a pass reads back under its token are the reminders it won, so
  racing beats or workers remind each member once per shift. A reminder whose publish failed
  (no `sent_at`) is sent again by a later pass under the same Idempotency-Key.
- **Escalation**: a notice past `due_at` with acknowledgements missing is claimed by
  `UPDATE ... SET escalated_at WHERE escalated_at IS NULL` (one pass wins); in the same
  transaction the e-mail to the escalation role naming who is missing is written to the outbox
  (SPEC 14: sent by its task, retried, one outcome). After the commit the escalation role's
  inbox receives a notification naming them (again by a later pass if that publish failed).
  Without an escalation role, the notice's author is told.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections import defaultdict
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q
from django.utils.translation import gettext

from config import idempotency, timestamps
from config.redis import REDIS_UNAVAILABLE
from directory import cache as directory_cache
from notifications.services import publish
from outbox import services as outbox
from shifts import cache as shift_cache
from shifts import schedule
from shifts import selectors as shifts

from . import selectors, services, wording
from .models import Notice, NoticeAck, NoticeReminder

logger = logging.getLogger(__name__)

# Namespace of the outbox ids of escalation e-mails: one per (notice, version).
EMAIL_IDS = uuid.UUID("0b7f0f0e-5a8e-4c39-9d0b-4b1f3c5e2a77")
EMAIL = "email"  # the outbox kind whose handler the actions app registers (actions/mail.py)
RETRY_AFTER = dt.timedelta(seconds=30)  # a reminder or escalation not sent by then is retried


def pass_all(*, at: dt.datetime | None = None) -> dict[str, int]:
    """What beat runs (see the module docstring); returns what it did."""
    now = timestamps.now() if at is None else at
    with directory_cache.request_scope():
        return {
            "published": publish_behind(),
            "reminded": remind(now=now),
            "escalated": escalate_due(now=now),
        }


def publish_behind() -> int:
    """Versions whose notification has not gone out yet, published now (those of notices
    with an audience: one saved from code gets its roles and users after its row)."""
    behind = Notice.objects.filter(is_closed=False, published_version__lt=F("version")).filter(
        Q(pk__in=Notice.roles.through.objects.values("notice_id"))
        | Q(pk__in=Notice.users.through.objects.values("notice_id"))
    )
    done = 0
    for pk in behind.order_by("version_at").values_list("pk", flat=True)[
        : settings.NOTICE_PASS_BATCH
    ]:
        done += services.publish_current(notice_id=pk, quiet=True)
    return done


# --- Reminders ----------------------------------------------------------------------------------


def _started(now: dt.datetime) -> dict[int, list[tuple[int, dt.datetime]]]:
    """{warehouse id: [(role id, start)]} of the shifts whose running occurrence started in the
    look-back window (read from the schedule held per process: no query)."""
    since = now - dt.timedelta(seconds=settings.NOTICE_REMINDER_LOOKBACK_SECONDS)
    found: dict[int, list[tuple[int, dt.datetime]]] = {}
    for warehouse_id, entries in shift_cache.schedule().by_warehouse.items():
        for shift in entries:
            running = schedule.current(shift.times, now)
            if running is not None and since < running.start <= now:
                found.setdefault(warehouse_id, []).append((shift.role_id, running.start))
    return found


def remind(*, now: dt.datetime) -> int:
    """Remind members at their shift's start (see the module docstring); how many now."""
    sent = _resend_unsent(now)
    started = _started(now)
    if not started:
        return sent
    members = shift_cache.schedule().members
    notices = Notice.objects.filter(
        warehouse_id__in=list(started), is_closed=False, requires_ack=True
    ).order_by("-version_at")[: settings.NOTICE_PASS_BATCH]
    for notice in notices:
        starts: dict[int, dt.datetime] = {}  # member -> the latest start of their shifts
        for role_id, start in started[notice.warehouse_id]:
            if start <= notice.version_at:
                continue  # they came on after it was published: the notification found them
            for user_id, _name in members.get(role_id, ()):
                if start > starts.get(user_id, start - dt.timedelta(days=1)):
                    starts[user_id] = start
        if not starts:
            continue
        audience = set(selectors.audience_ids(notice).values_list("pk", flat=True))
        acked = set(
            NoticeAck.objects.filter(notice_id=notice.pk, version=notice.version).values_list(
                "user_id", flat=True
            )
        )
        due = {u: s for u, s in starts.items() if u in audience and u not in acked}
        if due:
            sent += _claim_and_send(notice, due, now=now)
    return sent


def _claim_and_send(notice: Notice, due: dict[int, dt.datetime], *, now: dt.datetime) -> int:
    token = uuid.uuid4().hex
    NoticeReminder.objects.bulk_create(
        [
            NoticeReminder(
                notice_id=notice.pk,
                version=notice.version,
                user_id=user_id,
                shift_start=start,
                token=token,
                created_at=now,
            )
            for user_id, start in due.items()
        ],
        ignore_conflicts=True,  # the claim: a row another pass inserted first stays its
    )
    won = list(NoticeReminder.objects.filter(token=token).values_list("user_id", flat=True))
    if not won:
        return 0
    return _send_reminders(notice.pk, notice.version, token, won)


def _send_reminders(notice_id: int, version: int, token: str, user_ids: list[int]) -> int:
    """The reminders a pass claimed under `token`, of `version` with that version's text. A
    version replaced since the claim is not reminded of: its claims are dropped (the new
    version was published to everyone, and its own reminders follow at the next shifts)."""
    notice = Notice.objects.filter(pk=notice_id, version=version).first()
    if notice is None:  # gone, or a new version since the claim
        NoticeReminder.objects.filter(token=token, sent_at__isnull=True).delete()
        return 0
    try:
        result = publish(
            message_type=services.notice_type(),
            warehouse=notice.warehouse_id,
            title=notice.title,
            body=notice.body,
            data={"notice_id": notice.pk, "version": version, "reminder": True},
            severity=notice.severity,
            extra_inboxes=sorted(f"u:{u}" for u in user_ids),
            idempotency_key=f"notice-{notice.pk}-v{version}-reminder-{token}",
            idempotency_scope="notices",
        )
    except REDIS_UNAVAILABLE:
        logger.warning("Notice %s: reminders %s not sent now (Redis)", notice.pk, token)
        return 0
    except idempotency.KeyReused:
        pass  # sent before to a list that changed since (a member was removed): it went out
    else:
        services.record_notification(
            notice_id=notice.pk, version=version, notification_id=result.id, reminder=True
        )
    NoticeReminder.objects.filter(token=token, sent_at__isnull=True).update(
        sent_at=timestamps.now()
    )
    return len(user_ids)


def _resend_unsent(now: dt.datetime) -> int:
    """Reminders claimed more than RETRY_AFTER ago whose publish failed: sent again."""
    rows = (
        NoticeReminder.objects.filter(sent_at__isnull=True, created_at__lt=now - RETRY_AFTER)
        .order_by("created_at")
        .values_list("notice_id", "version", "token", "user_id")[: settings.NOTICE_PASS_BATCH]
    )
    groups: dict[tuple[int, int, str], list[int]] = defaultdict(list)
    for notice_id, version, token, user_id in rows:
        groups[(notice_id, version, token)].append(user_id)
    return sum(_send_reminders(n, v, t, users) for (n, v, t), users in groups.items())


# --- Escalation ---------------------------------------------------------------------------------


def escalate_due(*, now: dt.datetime) -> int:
    """Claim and escalate the notices past due with acknowledgements missing; how many now."""
    _resend_escalations(now)
    due = Notice.objects.filter(
        is_closed=False, requires_ack=True, due_at__lte=now, escalated_at__isnull=True
    ).order_by("due_at")[: settings.NOTICE_PASS_BATCH]
    made = 0
    for notice in due:
        missing = selectors.missing_members(notice=notice)
        with transaction.atomic():
            won = Notice.objects.filter(
                pk=notice.pk, escalated_at__isnull=True, version=notice.version
            ).update(
                escalated_at=now,
                escalated_version=notice.version,
                escalated_missing=len(missing),
                escalation_sent=not missing,
            )
            if not won or not missing:
                continue
            to = email_recipients(notice)
            if to:
                outbox.enqueue(
                    kind=EMAIL,
                    payload=_email(notice, missing, to),
                    message_id=uuid.uuid5(EMAIL_IDS, f"{notice.pk}:{notice.version}"),
                )
        made += 1
        _send_escalation(notice, missing)
    return made


def _escalation_inboxes(notice: Notice) -> list[str]:
    if notice.escalation_role_id is not None:
        return [f"r:{notice.escalation_role_id}"]
    return [] if notice.created_by_id is None else [f"u:{notice.created_by_id}"]


def _send_escalation(notice: Notice, missing: list[tuple[int, str]]) -> bool:
    """Its notification to the escalation role, in sentences (notices/wording.py; the page says
    them again in its reader's language from `data`, and links to the roster)."""
    inboxes = _escalation_inboxes(notice)
    names = [name for _pk, name in missing[: settings.NOTICE_ESCALATION_MAX_NAMES]]
    if inboxes:
        try:
            publish(
                message_type=services.notice_type(),
                warehouse=notice.warehouse_id,
                title=wording.escalation_title(title=notice.title)[
                    : settings.NOTIFICATION_TITLE_MAX_LENGTH
                ],
                body=wording.escalation_body(
                    version=notice.version, names=names, count=len(missing)
                )[: settings.NOTIFICATION_BODY_MAX_LENGTH],
                data={
                    "notice_id": notice.pk,
                    "version": notice.version,
                    "escalation": True,
                    "title": notice.title,
                    "missing": names,
                    "missing_count": len(missing),
                },
                severity=notice.severity,
                extra_inboxes=inboxes,
                idempotency_key=f"notice-{notice.pk}-v{notice.version}-escalation",
                idempotency_scope="notices",
            )
        except REDIS_UNAVAILABLE:
            logger.warning("Notice %s: escalation not sent now (Redis)", notice.pk)
            return False
        except idempotency.KeyReused:
            pass  # it went out before, naming who was missing then
    Notice.objects.filter(pk=notice.pk).update(escalation_sent=True)
    return True


def _resend_escalations(now: dt.datetime) -> None:
    stuck = Notice.objects.filter(
        escalated_at__lt=now - RETRY_AFTER, escalation_sent=False, escalated_missing__gt=0
    ).order_by("escalated_at")[: settings.NOTICE_PASS_BATCH]
    for notice in stuck:
        _send_escalation(notice, selectors.missing_members(notice=notice))


def email_recipients(notice: Notice) -> list[str]:
    """The addresses of the escalation role's active members who are on shift in the notice's
    warehouse now (when none is, all of them: the e-mail must reach someone); without an
    escalation role, the author's. Sorted, each once."""
    if notice.escalation_role_id is not None:
        people = User.objects.filter(groups=notice.escalation_role_id)
    elif notice.created_by_id is not None:
        people = User.objects.filter(pk=notice.created_by_id)
    else:
        return []
    addresses = dict(
        people.filter(is_active=True)
        .exclude(Q(email="") | Q(email__isnull=True))
        .values_list("pk", "email")
        .distinct()
    )
    on = shifts.on_shift_user_ids(
        warehouse_id=notice.warehouse_id, user_ids=addresses, at=timestamps.now()
    )
    chosen = [address for pk, address in addresses.items() if pk in on] or list(addresses.values())
    return sorted(set(chosen))


def _email(notice: Notice, missing: list[tuple[int, str]], to: list[str]) -> dict[str, Any]:
    warehouse = notice.warehouse
    subject = gettext("[%(warehouse)s] Notice not read by %(count)d: %(title)s") % {
        "warehouse": warehouse.code,
        "count": len(missing),
        "title": notice.title,
    }
    due = notice.due_at.isoformat(timespec="minutes") if notice.due_at else ""
    lines = [
        gettext("Notice %(title)s (version %(version)d) in %(warehouse)s was due %(due)s.")
        % {
            "title": notice.title,
            "version": notice.version,
            "warehouse": f"{warehouse.code} {warehouse.name}",
            "due": due,
        },
        gettext("%(count)d of its readers have not acknowledged it:") % {"count": len(missing)},
        "",
        *(f"- {name}" for _pk, name in missing[: settings.NOTICE_ESCALATION_MAX_NAMES]),
    ]
    if len(missing) > settings.NOTICE_ESCALATION_MAX_NAMES:
        lines.append(
            gettext("and %(count)d more")
            % {"count": len(missing) - settings.NOTICE_ESCALATION_MAX_NAMES}
        )
    return {
        "to": to,
        "subject": subject.replace("\n", " ")[:200],
        "body": "\n".join(lines) + "\n",
        "warehouse": warehouse.pk,
        "notice": notice.pk,
    }
