"""The outbox: what the server must send to the outside (a webhook, an e-mail), one row each.

A feature writes the row in the same database transaction as the decision that calls for it,
so the decision and the duty to send exist together or not at all; a Celery task on its own
queue sends it (outbox/services.py), retrying with back-off, and records one outcome. Every
time in a row that a lease or the relay compares is the database's (`Now()`), never a
worker's clock. Rows that ended are deleted after OUTBOX_RETENTION_DAYS.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _


class Status(models.TextChoices):
    PENDING = "pending", _("Pending")  # waiting for its (next) attempt
    SENDING = "sending", _("Sending")  # an attempt is under way (a worker holds its lease)
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


FINAL = (Status.SUCCEEDED, Status.FAILED)


class OutboxMessage(models.Model):
    """One thing to send. Its `id` is the Idempotency-Key of every attempt: a receiver that
    honours it acts once however often a worker that died mid-call makes us send it."""

    id = models.UUIDField(_("ID"), primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(
        _("kind"), max_length=32, help_text=_("Which handler sends it (webhook, email).")
    )
    payload = models.JSONField(_("payload"), help_text=_("What its handler needs to send it."))
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.PENDING
    )
    attempts = models.PositiveIntegerField(
        _("attempts"), default=0, help_text=_("Attempts started so far.")
    )
    max_attempts = models.PositiveIntegerField(_("attempts at most"), default=5)
    next_attempt_at = models.DateTimeField(
        _("next attempt at"), help_text=_("When it is due (pending ones).")
    )
    lease_until = models.DateTimeField(
        _("lease until"),
        null=True,
        blank=True,
        help_text=_("Sending: when a worker that died holding it is given up."),
    )
    queued_until = models.DateTimeField(
        _("queued until"),
        null=True,
        blank=True,
        help_text=_("A task for it is queued: beat's pass queues no other before this time."),
    )
    last_error = models.CharField(_("last error"), max_length=500, blank=True)
    result = models.TextField(
        _("result"), blank=True, help_text=_("What the receiver answered (cut).")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    settled_at = models.DateTimeField(
        _("settled at"),
        null=True,
        blank=True,
        help_text=_("When the feature that wrote it recorded its outcome (history, status)."),
    )

    class Meta:
        verbose_name = _("outbox message")
        verbose_name_plural = _("outbox messages")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="outbox_due"),
            models.Index(fields=["status", "lease_until"], name="outbox_lease"),
            models.Index(
                fields=["settled_at", "status"],
                name="outbox_unsettled",
                condition=models.Q(settled_at__isnull=True),
            ),
            models.Index(
                fields=["finished_at"],
                name="outbox_finished",
                condition=models.Q(finished_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id} ({self.status})"

    @property
    def final(self) -> bool:
        return self.status in FINAL
