"""Bins and their stock: the business table the worked rule example scans."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from subscriptions.models import Warehouse


class Bin(models.Model):
    """A storage location in a warehouse with the stock recorded in it (one item per bin)."""

    warehouse = models.ForeignKey(
        Warehouse, verbose_name=_("warehouse"), on_delete=models.CASCADE, related_name="bins"
    )
    code = models.CharField(
        _("code"), max_length=32, help_text=_("e.g. A-01-03 (aisle, rack, level).")
    )
    stock = models.IntegerField(
        _("stock"),
        default=0,
        help_text=_("Below zero when a pick wave took more than the records showed: replenish."),
    )
    last_wave = models.PositiveIntegerField(
        _("last wave"), null=True, blank=True, help_text=_("The last pick wave that took from it.")
    )
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("bin")
        verbose_name_plural = _("bins")
        ordering = ["warehouse__code", "code"]
        constraints = [
            models.UniqueConstraint(fields=["warehouse", "code"], name="inventory_bin_unique_code"),
        ]
        indexes = [models.Index(fields=["stock"], name="inventory_bin_stock")]

    def __str__(self) -> str:
        return f"{self.code} ({self.stock})"


class ReplenishmentTask(models.Model):
    """What the demo's WMS makes when an operator presses "Replenishment task created" on an
    alert (the alert action's webhook, inventory/webhooks.py): one per run, however often the
    call comes (its Idempotency-Key is the run's id)."""

    run_id = models.UUIDField(
        _("run ID"), unique=True, help_text=_("The alert action's run (Idempotency-Key).")
    )
    warehouse = models.ForeignKey(
        Warehouse, verbose_name=_("warehouse"), on_delete=models.CASCADE, related_name="+"
    )
    bin_code = models.CharField(_("bin code"), max_length=32)
    quantity = models.IntegerField(
        _("quantity"), help_text=_("How much to bring: what the bin is short of.")
    )
    notification_id = models.CharField(_("notification ID"), max_length=36)
    requested_by = models.CharField(_("requested by"), max_length=150)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("replenishment task")
        verbose_name_plural = _("replenishment tasks")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"RT-{self.pk} {self.bin_code} +{self.quantity}"
