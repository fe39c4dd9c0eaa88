"""Writes of the quiet floor (SPEC 17): planned silences and their end, and mutes."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from config import errors, timestamps
from config.users import User
from notifications import hooks
from notifications.domain import Severity
from notifications.readmodel import quiet as quiet_store
from subscriptions.models import MessageType, Warehouse

from .models import Silence

logger = logging.getLogger(__name__)


def silence_create(
    *,
    warehouse: Warehouse,
    message_types: Sequence[MessageType],
    starts_at: dt.datetime,
    ends_at: dt.datetime,
    reason: str,
    include_critical: bool,
    created_by: User | None,
) -> Silence:
    """Store a planned silence; publishes from now on honour it (the directory's version moves)."""
    if ends_at <= starts_at:
        raise errors.Invalid(_("A silence must end after it starts."))
    with transaction.atomic():
        silence = Silence.objects.create(
            warehouse=warehouse,
            starts_at=starts_at,
            ends_at=ends_at,
            reason=reason,
            include_critical=include_critical,
            created_by=created_by,
        )
        silence.message_types.set(message_types)
    return silence


def silence_delete(*, silence: Silence) -> None:
    """Delete a silence; what it held back is woken after the commit (in the worker)."""
    warehouse_id, silence_id = silence.warehouse_id, silence.pk
    silence.delete()

    transaction.on_commit(lambda: wake_silence.delay(warehouse_id, silence_id))


# Declared here, beside the code that queues it, under the tasks module's name (quiet/tasks.py
# re-exports it): services and tasks import one way only.
@shared_task(name="quiet.tasks.wake_silence", ignore_result=True)
def wake_silence(warehouse_id: int, silence_id: int) -> int:
    """A deleted silence: wake what it held back."""
    return wake(warehouse_id=warehouse_id, silence_id=silence_id)


def _escalation_delays_ms() -> dict[str, int]:
    rows = MessageType.objects.filter(escalate_after_seconds__isnull=False).values_list(
        "code", "escalate_after_seconds"
    )
    return {code: int(seconds) * 1000 for code, seconds in rows}


def wake(*, warehouse_id: int, silence_id: int) -> int:
    """Deliver once, like a new alert, what the silence held back and is still open: a bounded
    batch (SILENCE_WAKE_BATCH) per Redis call, until none is left. Returns how many."""
    delays = _escalation_delays_ms()
    woken = 0
    while True:
        batch = quiet_store.unsilence(
            warehouse_id=warehouse_id,
            silence_id=silence_id,
            now_ms=timestamps.now_ms(),
            most=settings.SILENCE_WAKE_BATCH,
            escalation_delays_ms=delays,
        )
        for notification, inboxes in batch.alerts:
            hooks.announce(hooks.Published(notification, inboxes))
        woken += len(batch.alerts)
        if not batch.more:
            return woken


def wake_ended() -> int:
    """Beat: wake what every silence that ended since the last pass held back."""
    woken = 0
    now = timestamps.now()
    for silence in Silence.objects.filter(ends_at__lte=now, woken_at__isnull=True):
        woken += wake(warehouse_id=silence.warehouse_id, silence_id=silence.pk)
        Silence.objects.filter(pk=silence.pk).update(woken_at=now)
    return woken


class MuteTooLong(errors.Invalid):
    default_code = "mute_too_long"


def mute_set(
    *, user: User, warehouse_id: int, until: dt.datetime, below: Severity
) -> quiet_store.Mute:
    """Mute, for this user, the warehouse's alerts under `below` until then (at most
    MUTE_MAX_SECONDS ahead, and in the future; critical always gets through)."""
    now = timestamps.now()
    if until <= now or until > now + dt.timedelta(seconds=settings.MUTE_MAX_SECONDS):
        raise MuteTooLong(
            _("A mute must end in the future, at most %(hours)d h from now.")
            % {"hours": settings.MUTE_MAX_SECONDS // 3600}
        )
    return quiet_store.mute_set(
        warehouse_id=warehouse_id,
        user_id=user.pk,
        until_ms=int(until.timestamp() * 1000),
        below=below.level,
    )


def mute_end(*, user: User, warehouse_id: int) -> bool:
    return quiet_store.mute_end(warehouse_id=warehouse_id, user_id=user.pk)
