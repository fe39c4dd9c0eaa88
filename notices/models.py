"""Notices everyone must read (SPEC 15): audit data, kept in the database (never in Redis).

A `Notice` has a version that grows whenever its title or body changes (its `save()` keeps that
rule, whoever saves it: the admin, the API, an import or `manage.py shell`); an acknowledgement
(`NoticeAck`) is of one version and keeps the hash of the text that version had, so what
someone confirmed having read stays provable after later edits. `NoticeNotification` rows are
the notifications published for a notice (acknowledging reads them). `NoticeReminder` rows are
the claims of reminders (one per notice, version, member and shift start): the unique
constraint makes a reminder once however many beats or workers race.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models, router, transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config import timestamps
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
        _("version at"),
        default=timestamps.now,
        editable=False,
        help_text=_("When the current version was made."),
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

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save it, keeping the notice's own rules whoever saves it (SPEC 10, 15):

        - a new notice gets the hash of its text (and `version_at` now);
        - a save that changes the title or body makes a new version (the stored one + 1, read
          under a row lock, so two edits at once make two versions), which everyone must
          acknowledge again; if the old version's due time has passed and this save gives no
          new one, the new version is due as long after now as the old one was after it was
          made (none when the old one was due before it was made), so an edit never escalates
          at once;
        - a new version or a moved due time may escalate again.

        The bookkeeping beat keeps (published version, escalation) is never written back from
        the copy in memory, which may be older than the row: a save writes it only when the
        rules above reset it. Publishing is not done here: the audience (roles, users) is saved
        after the row, so the admin and the API publish after their commit, and beat's next
        pass publishes any version that is behind (one saved from code)."""
        if self.pk is None:
            self.text_hash = text_hash(self.title, self.body)
            if self.version_at is None:
                self.version_at = timestamps.now()
            super().save(*args, **kwargs)
            return
        using = kwargs.get("using") or router.db_for_write(type(self), instance=self)
        with transaction.atomic(using=using):
            stored = (
                type(self)
                ._default_manager.db_manager(using)
                .select_for_update()
                .filter(pk=self.pk)
                .values(*_STORED)
                .first()
            )
            if stored is None:  # deleted meanwhile (or a pk given by hand): saved as given
                self.text_hash = text_hash(self.title, self.body)
                super().save(*args, **kwargs)
                return
            written = self._keep_rules(stored, kwargs.get("update_fields"))
            kwargs["update_fields"] = written
            super().save(*args, **kwargs)

    def _keep_rules(self, stored: dict[str, Any], update_fields: Any) -> list[str]:
        """Apply the rules against the stored row; the fields the save writes."""
        asked = None if update_fields is None else set(update_fields)
        fields = [
            f.name
            for f in self._meta.concrete_fields
            if not f.primary_key and (asked is None or f.name in asked)
        ]
        # What the row will hold: the fields written from memory, the others as stored.
        title = self.title if "title" in fields else stored["title"]
        body = self.body if "body" in fields else stored["body"]
        due_at = self.due_at if "due_at" in fields else stored["due_at"]
        # Beat's bookkeeping as stored, unless the caller names it in `update_fields`.
        kept = [name for name in BOOKKEEPING if asked is None or name not in asked]
        for name in (*kept, *VERSIONING):
            setattr(self, name, stored[name])
        written = set(fields) - set(kept) - set(VERSIONING)
        if asked is not None:  # a name that is no field: Django's save() says so
            written |= asked - {f.name for f in self._meta.concrete_fields}
        due_moved = due_at != stored["due_at"]
        if text_hash(title, body) != stored["text_hash"]:
            now = timestamps.now()
            self.version = stored["version"] + 1
            self.version_at = now
            self.text_hash = text_hash(title, body)
            written |= set(VERSIONING)
            if not due_moved and due_at is not None and due_at <= now:
                self.due_at = _fresh_due(stored["due_at"], stored["version_at"], now)
                written.add("due_at")
            self._reset_escalation()
            written |= set(ESCALATION)
        elif due_moved:
            self._reset_escalation()
            written |= set(ESCALATION)
        return sorted(written)

    def _reset_escalation(self) -> None:
        self.escalated_at = None
        self.escalated_version = None
        self.escalated_missing = None
        self.escalation_sent = False


def _fresh_due(
    due_at: dt.datetime, version_at: dt.datetime, now: dt.datetime
) -> dt.datetime | None:
    """The due time of a version made `now` when the old one's (`due_at`) has passed: as long
    to read as the old version had, or none when it had no time at all."""
    to_read = due_at - version_at
    return now + to_read if to_read > dt.timedelta(0) else None


# What a save changes only through the rules of Notice.save(), and the bookkeeping of beat's
# pass (written by its own UPDATEs).
VERSIONING = ("version", "version_at", "text_hash")
ESCALATION = ("escalated_at", "escalated_version", "escalated_missing", "escalation_sent")
BOOKKEEPING = ("published_version", "notification_id", *ESCALATION)
_STORED = ("title", "body", "due_at", *VERSIONING, *BOOKKEEPING)


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


class NoticeNotification(models.Model):
    """A NOTICE notification published for a notice: a version's (to its audience) or a
    reminder's (to the members it reminded). Acknowledging a version reads those of it and
    of the versions before it for the reader (SPEC 15: one thing to clear)."""

    notice = models.ForeignKey(Notice, on_delete=models.CASCADE, related_name="notifications")
    version = models.PositiveIntegerField()
    notification_id = models.CharField(max_length=36, unique=True)
    reminder = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.notification_id} (v{self.version} of {self.notice_id})"


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
