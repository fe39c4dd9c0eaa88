"""The worked rule example: negative bin stock after a pick wave raises REP_NOTICE."""

# Subscriptions decide who receives it (in the demo: the warehouse's Replenishment role). The
# same rule ships as an SQL rule in the demo data (inventory.demo.NEGATIVE_STOCK_SQL).

from __future__ import annotations

from collections.abc import Iterator

from rules import Alert, Rule, register

from .models import Bin


@register
class NegativeBinStock(Rule):
    """Bins whose stock went below zero: ask the warehouse's replenishment staff to refill them."""

    name = "negative_bin_stock"
    message_type = "REP_NOTICE"
    interval_seconds = 15  # as often as beat ticks (RULES_TICK_SECONDS): a demo wants it quick
    description = "Negative bin stock after a pick wave -> replenishment notice"

    def alerts(self) -> Iterator[Alert]:
        bins = Bin.objects.filter(stock__lt=0, warehouse__is_active=True).order_by("code")
        for bin in bins:
            after = f" after wave {bin.last_wave}" if bin.last_wave else ""
            yield Alert(
                warehouse=bin.warehouse_id,
                title=f"Replenish {bin.code}",
                body=f"Stock is {bin.stock}{after}",
                data={"bin": bin.code, "qty": bin.stock},
                key=bin.code,  # one notice per bin while it stays negative
            )


@register
class BinStockOut(Rule):
    """Bins far below zero: pickers are waiting. A critical STOCK_OUT that escalates to the
    supervisors when nobody claims it in time (the alert lifecycle's demo)."""

    name = "bin_stock_out"
    message_type = "STOCK_OUT"
    interval_seconds = 15
    description = "Bin stock at or below -10 -> critical stock-out alert (escalates)"
    threshold = -10

    def alerts(self) -> Iterator[Alert]:
        bins = Bin.objects.filter(stock__lte=self.threshold, warehouse__is_active=True)
        for bin in bins.order_by("code"):
            yield Alert(
                warehouse=bin.warehouse_id,
                title=f"Stock-out {bin.code}",
                body=f"Stock is {bin.stock}: pickers are waiting at {bin.code}",
                data={"bin": bin.code, "qty": bin.stock},
                key=bin.code,
            )
