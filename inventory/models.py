"""Bins and their stock: the business table the worked rule example scans."""

from __future__ import annotations

from django.db import models

from subscriptions.models import Warehouse


class Bin(models.Model):
    """A storage location in a warehouse with the stock recorded in it (one item per bin)."""

    warehouse = models.ForeignKey(Warehouse, on_delete=models.CASCADE, related_name="bins")
    code = models.CharField(max_length=32, help_text="e.g. A-01-03 (aisle, rack, level).")
    stock = models.IntegerField(
        default=0,
        help_text="Below zero when a pick wave took more than the records showed: replenish.",
    )
    last_wave = models.PositiveIntegerField(
        null=True, blank=True, help_text="The last pick wave that took from it."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["warehouse__code", "code"]
        constraints = [
            models.UniqueConstraint(fields=["warehouse", "code"], name="inventory_bin_unique_code"),
        ]
        indexes = [models.Index(fields=["stock"], name="inventory_bin_stock")]

    def __str__(self) -> str:
        return f"{self.code} ({self.stock})"
