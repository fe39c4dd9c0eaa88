"""An episode of late or missing delivery in a warehouse (SPEC 16): when it began, when the
alarm went out and when it ended, so each episode e-mails once, and once more on recovery."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from subscriptions.models import Warehouse


class Episode(models.Model):
    warehouse = models.ForeignKey(
        Warehouse, on_delete=models.CASCADE, related_name="delivery_episodes"
    )
    status = models.CharField(_("status"), max_length=8, help_text=_("late or missing"))
    started_at = models.DateTimeField(_("started at"))
    alarmed_at = models.DateTimeField(_("alarm sent at"), null=True, blank=True)
    ended_at = models.DateTimeField(_("ended at"), null=True, blank=True)

    class Meta:
        verbose_name = _("delivery episode")
        verbose_name_plural = _("delivery episodes")
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["warehouse"],
                condition=Q(ended_at__isnull=True),
                name="delivery_one_open_episode_per_warehouse",
            )
        ]

    def __str__(self) -> str:
        return f"{self.warehouse.code}: {self.status} since {self.started_at:%Y-%m-%d %H:%M:%S}"
