"""Writing to the outbox and sending what it holds: one outcome per message, however workers die.

- `enqueue` (inside the caller's transaction): the row, and after the commit its task on the
  OUTBOX_QUEUE queue (one attempt to queue: a broker that refuses it leaves the row for the
  next pass).
- `deliver` (the task): takes the message with a lease (`sending`, attempts + 1) in one
  conditional UPDATE, so of two workers one sends; calls its kind's handler outside any
  transaction and within three quarters of the lease (outbound/deadline.py: e-mail and webhooks
  are cut off there), so no attempt outlives its lease; stores the outcome only while it still
  holds that attempt (a worker that took over after the lease ran out wins); a final outcome
  is then settled by the feature.
- `pass_due` (beat, every OUTBOX_PASS_SECONDS): queues, in bounded batches, what is due, what a
  dead worker left `sending` past its lease, and outcomes not settled (a worker killed between
  storing the outcome and settling it), each only when no task for it is queued: a queued
  message holds `queued_until` for a lease, so a pass with no worker running adds no task.
- `purge_ended` (beat, every OUTBOX_PURGE_SECONDS): deletes, in bounded batches, the messages
  that ended (and were settled) more than OUTBOX_RETENTION_DAYS ago.

Every time compared here (due, leases, queued, ended) is the database's clock (`Now()`), so a
worker whose clock is off neither takes a lease another still holds nor gives up its own early.
Every attempt of a message carries its id as Idempotency-Key (the webhook handler sends it), so
a receiver that honours it acts once even when a worker dies after the call went out and the
message is sent again.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
import uuid
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Now

from outbound import deadline

from . import handlers, metrics
from .handlers import Delivery, Outcome
from .models import FINAL, OutboxMessage, Status

logger = logging.getLogger(__name__)

# An attempt must be over within this share of its lease; the rest of the lease is left for
# storing its outcome before another worker may take the message over.
ATTEMPT_SHARE_OF_LEASE = 0.75


def enqueue(
    *,
    kind: str,
    payload: dict[str, Any],
    message_id: uuid.UUID | None = None,
    max_attempts: int | None = None,
    queue_on_commit: bool = True,
) -> OutboxMessage:
    """Write a message to send (call it inside the transaction of the decision that calls for
    it); its task is queued once that transaction commits (`queue_on_commit` False: the caller
    queues it when ready, with `queue`; beat's pass queues it a lease later if the caller never
    does)."""
    if handlers.handler_of(kind) is None:
        raise ValueError(f"No outbox handler for {kind!r}.")
    # Either way it is queued soon: beat's pass leaves it to that task for a lease.
    message = OutboxMessage.objects.create(
        id=message_id or uuid.uuid4(),
        kind=kind,
        payload=payload,
        max_attempts=max_attempts or settings.OUTBOX_MAX_ATTEMPTS,
        next_attempt_at=Now(),
        queued_until=_in(settings.OUTBOX_LEASE_SECONDS),
    )
    if queue_on_commit:
        transaction.on_commit(lambda: queue(message.id))
    return message


def _in(seconds: float) -> CombinedExpression:
    """The database's time `seconds` from now (an expression for a filter or an UPDATE)."""
    return Now() + dt.timedelta(seconds=seconds)


def queue(message_id: uuid.UUID | str, *, countdown: float = 0) -> None:
    """Queue the task that sends it (no retries of the queueing: the next pass finds it, as it
    is no longer marked queued)."""
    try:
        deliver_task.apply_async((str(message_id),), countdown=countdown, retry=False)
    except Exception as exc:  # the broker's errors vary: kombu, redis, OS
        metrics.QUEUE_ERRORS.inc()
        logger.warning("Could not queue outbox message %s: %s", message_id, exc)
        OutboxMessage.objects.filter(pk=message_id).update(queued_until=None)


# The task that sends a message, declared here beside the code that queues it (a retry queues
# it again) under the tasks module's name, which lists it: so services and tasks import one way
# only. Its own queue (OUTBOX_QUEUE): a slow receiver never holds up sweeps and rules.
@shared_task(name="outbox.tasks.deliver", ignore_result=True, queue=settings.OUTBOX_QUEUE)
def deliver_task(message_id: str) -> str:
    """One attempt at an outbox message."""
    return deliver(message_id)


def _take(message_id: str) -> OutboxMessage | None:
    """Start an attempt: `sending`, attempts + 1, a lease; None when it is not this worker's
    to send (done, not due, or another worker holds a live lease)."""
    taken = OutboxMessage.objects.filter(
        Q(status=Status.PENDING, next_attempt_at__lte=Now())
        | Q(status=Status.SENDING, lease_until__lt=Now()),
        pk=message_id,
    ).update(
        status=Status.SENDING,
        attempts=F("attempts") + 1,
        lease_until=_in(settings.OUTBOX_LEASE_SECONDS),
        queued_until=None,  # this task was the queued one: a pass may queue the next
    )
    if not taken:
        return None
    return OutboxMessage.objects.get(pk=message_id)


def deliver(message_id: str) -> str:
    """One attempt at the message, if it is due and free; its outcome stored and, when final,
    settled. Returns what happened (for logs and tests)."""
    # Read before the lease is taken: the attempt's deadline falls before the lease ends.
    started = time.monotonic()
    message = _take(message_id)
    if message is None:
        found = OutboxMessage.objects.filter(pk=message_id).first()
        if found is not None and found.final and found.settled_at is None:
            settle(found)
            return "settled"
        return "not due"
    handler = handlers.handler_of(message.kind)
    if handler is None:
        delivery = Delivery(Outcome.FAILED, error=f"no handler for {message.kind!r}")
    else:
        try:
            with deadline.within(
                settings.OUTBOX_LEASE_SECONDS * ATTEMPT_SHARE_OF_LEASE, since=started
            ):
                delivery = handler.send(message)
        except Exception as exc:  # a handler's bug must not leave the message sending for ever
            logger.exception("Outbox handler %s failed on %s", message.kind, message.id)
            delivery = Delivery(Outcome.RETRY, error=f"{type(exc).__name__}: {exc}")
    return _record(message, delivery)


def _record(message: OutboxMessage, delivery: Delivery) -> str:
    last = message.attempts >= message.max_attempts
    outcome = delivery.outcome
    if outcome == Outcome.RETRY and last:
        outcome = Outcome.FAILED
    changes: dict[str, Any] = {"last_error": delivery.error[:500], "lease_until": None}
    if outcome == Outcome.RETRY:
        wait = backoff_seconds(message.attempts)
        changes.update(
            status=Status.PENDING,
            next_attempt_at=_in(wait),
            # The retry's task is queued below, to run after the wait: a pass leaves it be.
            queued_until=_in(wait + settings.OUTBOX_LEASE_SECONDS),
        )
    else:
        changes.update(
            status=Status.SUCCEEDED if outcome == Outcome.SUCCEEDED else Status.FAILED,
            finished_at=Now(),
            result=delivery.result[: settings.OUTBOX_RESULT_MAX_CHARS],
            queued_until=None,
        )
    # Only while this attempt is still the message's: a worker that took it over after the
    # lease ran out has its own attempt, and its outcome is the one kept.
    stored = OutboxMessage.objects.filter(
        pk=message.pk, status=Status.SENDING, attempts=message.attempts
    ).update(**changes)
    label = "retried" if outcome == Outcome.RETRY else str(outcome)
    metrics.ATTEMPTS.labels(message.kind, label).inc()
    if not stored:
        return "superseded"
    if outcome == Outcome.RETRY:
        queue(message.pk, countdown=wait)
        return "retry"
    message.refresh_from_db()
    settle(message)
    return str(outcome)


def settle(message: OutboxMessage) -> None:
    """Let the feature record the final outcome (idempotent), then mark the message settled."""
    handler = handlers.handler_of(message.kind)
    if handler is not None:
        handler.settle(message)
    OutboxMessage.objects.filter(pk=message.pk, settled_at__isnull=True).update(settled_at=Now())


def backoff_seconds(attempts: int) -> float:
    """The wait after attempt number `attempts` failed: OUTBOX_RETRY_FIRST_SECONDS doubled
    each time up to OUTBOX_RETRY_MAX_SECONDS, less up to a quarter of jitter (messages that
    failed together do not all come back together)."""
    delay = min(
        settings.OUTBOX_RETRY_MAX_SECONDS,
        settings.OUTBOX_RETRY_FIRST_SECONDS * 2 ** max(0, attempts - 1),
    )
    return float(delay * (1 - random.random() / 4))  # noqa: S311  (jitter, not security)


def pass_due(*, batch: int | None = None) -> dict[str, int]:
    """What beat runs: queue (at most `batch` of each) the messages due, those a dead worker
    left sending past their lease, and final outcomes not yet settled; each only if no task
    for it is queued (`queued_until` past), and each then marked queued for a lease."""
    size = batch or settings.OUTBOX_PASS_BATCH
    due = _claim(
        Q(status=Status.PENDING, next_attempt_at__lte=Now()), order="next_attempt_at", size=size
    )
    lost = _claim(Q(status=Status.SENDING, lease_until__lt=Now()), order="lease_until", size=size)
    unsettled = _claim(Q(settled_at__isnull=True, status__in=FINAL), order="finished_at", size=size)
    for _, kind in lost:
        metrics.ATTEMPTS.labels(kind, "lost").inc()
    for pk, _ in (*due, *lost, *unsettled):
        queue(pk)
    return {"due": len(due), "lost": len(lost), "unsettled": len(unsettled)}


def _claim(which: Q, *, order: str, size: int) -> list[tuple[uuid.UUID, str]]:
    """At most `size` messages of `which` that no queued task covers, marked queued for a
    lease in the same transaction (PostgreSQL: rows another pass is marking are skipped)."""
    free = Q(queued_until__isnull=True) | Q(queued_until__lt=Now())
    with transaction.atomic():
        found = list(
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(which, free)
            .order_by(order)
            .values_list("pk", "kind")[:size]
        )
        if found:
            OutboxMessage.objects.filter(free, pk__in=[pk for pk, _ in found]).update(
                queued_until=_in(settings.OUTBOX_LEASE_SECONDS)
            )
    return found


def purge_ended(*, batch: int = 1000, batches: int = 10) -> int:
    """Delete the messages that ended (succeeded or failed, and settled by their feature) more
    than OUTBOX_RETENTION_DAYS ago: at most `batches` batches of `batch` rows per call (beat
    comes back for the rest). Returns how many were deleted."""
    before = Now() - dt.timedelta(days=settings.OUTBOX_RETENTION_DAYS)
    deleted = 0
    for _ in range(batches):
        ids = list(
            OutboxMessage.objects.filter(
                status__in=FINAL, settled_at__isnull=False, finished_at__lt=before
            )
            .order_by("finished_at")
            .values_list("pk", flat=True)[:batch]
        )
        if not ids:
            break
        # The same condition again: a row an operator retried since it was read stays.
        _, counts = OutboxMessage.objects.filter(
            pk__in=ids, status__in=FINAL, settled_at__isnull=False, finished_at__lt=before
        ).delete()
        deleted += counts.get(OutboxMessage._meta.label, 0)
        if len(ids) < batch:
            break
    return deleted


def retry_now(message: OutboxMessage) -> bool:
    """An operator's retry (the admin's button): a failed message gets another round of
    attempts, a pending one is due now. False when it cannot be (succeeded, sending, or its
    feature refuses, e.g. a newer run of the same action exists)."""
    if message.status not in (Status.FAILED, Status.PENDING):
        return False
    handler = handlers.handler_of(message.kind)
    if message.status == Status.FAILED and handler is not None and not handler.reopen(message):
        return False
    changed = OutboxMessage.objects.filter(pk=message.pk, status=message.status).update(
        status=Status.PENDING,
        next_attempt_at=Now(),
        queued_until=_in(settings.OUTBOX_LEASE_SECONDS),  # queued below, once committed
        max_attempts=F("attempts") + settings.OUTBOX_MAX_ATTEMPTS
        if message.status == Status.FAILED
        else F("max_attempts"),
        finished_at=None,
        settled_at=None,
    )
    if changed:
        transaction.on_commit(lambda: queue(message.pk))
    return bool(changed)
