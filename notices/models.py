"""Notices everyone must read (SPEC 15): audit data, kept in the database (never in Redis).

A `Notice` has a version that grows whenever its title or body changes; an acknowledgement
(`NoticeAck`) is of one version and keeps the hash of the text that version had, so what
someone confirmed having read stays provable after later edits. `NoticeReminder` rows are the
claims of reminders (one per notice, version, member and shift start): the unique constraint
makes a reminder once however many beats or workers race.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from subscriptions.models import Warehouse


class Severity(models.TextChoices):
    INFO = "info", _("info")
    WARNING = "warning", _("warning")
    CRITICAL = "critical", _("critical")


def text_hash(title: str, body: str) -> str:
    """SHA-256 of the text a reader saw (title and body, NUL-separated: no two texts share it)."""
    return hashlib.sha256(f"{title}\0{body}".encode()).hexdigest()


class Notice(models.Model):
    """A safety or procedure notice the members of its roles and its users must acknowledge."""

    warehouse = models.ForeignKey(
        Warehouse, verbose_name=_("warehouse"), on_delete=models.CASCADE, related_name="notices"
    )
    title = models.CharField(_("title"), max_length=200)
    body = models.TextField(_("body"), blank=True)
    severity = models.CharField(
        _("severity"), max_length=10, choices=Severity.choices, default=Severity.WARNING
    )
    roles = models.ManyToManyField(
        Group,
        verbose_name=_("roles"),
        blank=True,
        related_name="notices",
        help_text=_("Every active member of these roles must read it (also those who join later)."),
    )
    users = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        verbose_name=_("users"),
        blank=True,
        related_name="notices",
        help_text=_("And these users."),
    )
    requires_ack = models.BooleanField(_("must be acknowledged"), default=True)
    due_at = models.DateTimeField(
        _("due"),
        null=True,
        blank=True,
        help_text=_("When it passes with acknowledgements missing, the escalation role is told."),
    )
    escalation_role = models.ForeignKey(
        Group,
        verbose_name=_("escalation role"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="escalated_notices",
        help_text=_("Told who is missing at the due time; its members may see the roster."),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("created by"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="notices_created",
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    version = models.PositiveIntegerField(_("version"), default=1, editable=False)
    version_at = models.DateTimeField(
        _("version at"), editable=False, help_text=_("When the current version was made.")
    )
    text_hash = models.CharField(_("text hash"), max_length=64, editable=False)
    is_closed = models.BooleanField(_("closed"), default=False)
    # Bookkeeping of the beat pass. The current version went out as `notification_id` once
    # `published_version` equals `version` (a publish that failed is made by the next pass).
    published_version = models.PositiveIntegerField(
        _("published version"), default=0, editable=False
    )
    notification_id = models.CharField(
        _("notification ID"), max_length=36, blank=True, editable=False
    )
    # The escalation's claim: set once by `UPDATE ... WHERE escalated_at IS NULL` (cleared by a
    # new version or a new due time); `escalated_missing` how many were missing (0: nobody, so
    # nothing was sent); `escalation_sent` once its notification went out.
    escalated_at = models.DateTimeField(_("escalated at"), null=True, blank=True, editable=False)
    escalated_version = models.PositiveIntegerField(
        _("escalated version"), null=True, blank=True, editable=False
    )
    escalated_missing = models.PositiveIntegerField(
        _("escalated missing"), null=True, blank=True, editable=False
    )
    escalation_sent = models.BooleanField(_("escalation sent"), default=False, editable=False)

    class Meta:
        verbose_name = _("notice")
        verbose_name_plural = _("notices")
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["warehouse", "-created_at"]),
            models.Index(
                fields=["due_at"],
                name="notice_due",
                condition=models.Q(escalated_at__isnull=True, is_closed=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} (v{self.version})"


class NoticeAck(models.Model):
    """That `user` read `version` of the notice (whose text had `text_hash`), once."""

    notice = models.ForeignKey(
        Notice, verbose_name=_("notice"), on_delete=models.CASCADE, related_name="acks"
    )
    version = models.PositiveIntegerField(_("version"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        related_name="notice_acks",
    )
    acked_at = models.DateTimeField(_("read at"))
    text_hash = models.CharField(_("text hash"), max_length=64)

    class Meta:
        verbose_name = _("notice ack")
        verbose_name_plural = _("notice acks")
        ordering = ["notice", "-version", "acked_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["notice", "version", "user"], name="notice_ack_once_per_version"
            )
        ]

    def __str__(self) -> str:
        return gettext("%(user)s read v%(version)d of %(notice)s") % {
            "user": self.user_id,
            "version": self.version,
            "notice": self.notice_id,
        }


class NoticeReminder(models.Model):
    """The claim of one reminder: the notice's version to a member at one shift start. Rows a
    pass inserted carry its `token`; `sent_at` once the reminder went out."""

    notice = models.ForeignKey(Notice, on_delete=models.CASCADE, related_name="reminders")
    version = models.PositiveIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notice_reminders"
    )
    shift_start = models.DateTimeField()
    token = models.CharField(max_length=32)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["notice", "version", "user", "shift_start"],
                name="notice_reminder_once_per_shift",
            )
        ]
        indexes = [models.Index(fields=["token"])]

    def __str__(self) -> str:
        return f"reminder of {self.notice_id} v{self.version} to {self.user_id}"
