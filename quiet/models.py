"""Planned silences (SPEC 17): a warehouse's alerts of some types held back for a while."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.bulk_writes import AnnouncingManager
from subscriptions.models import MessageType, Warehouse


class Silence(models.Model):
    """From `starts_at` to `ends_at`, alerts of `message_types` (none: all) in `warehouse` are
    held back: listed, but unread for nobody, not pushed, reminded, e-mailed or escalated.
    Critical ones only with `include_critical`."""

    warehouse = models.ForeignKey(
        Warehouse, verbose_name=_("warehouse"), on_delete=models.CASCADE, related_name="silences"
    )
    message_types = models.ManyToManyField(
        MessageType,
        verbose_name=_("message types"),
        blank=True,
        help_text=_("None: every message type."),
    )
    starts_at = models.DateTimeField(_("starts at"))
    ends_at = models.DateTimeField(_("ends at"))
    reason = models.CharField(_("reason"), max_length=200)
    include_critical = models.BooleanField(
        _("include critical alerts"),
        default=False,
        help_text=_("Critical alerts get through a silence unless this is ticked."),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("created by"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    woken_at = models.DateTimeField(_("woken at"), null=True, blank=True, editable=False)

    objects = AnnouncingManager()

    class Meta:
        verbose_name = _("planned silence")
        verbose_name_plural = _("planned silences")
        ordering = ("starts_at", "pk")

    def __str__(self) -> str:
        return f"{self.warehouse_id}: {self.reason}"

    def clean(self) -> None:
        if self.starts_at and self.ends_at and self.ends_at <= self.starts_at:
            raise ValidationError({"ends_at": _("A silence must end after it starts.")})
