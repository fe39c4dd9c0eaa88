"""Demo data of the inventory app: bins in SH01 and HH02, a first pick wave, and the SQL rule."""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings
from django.db import connections

from rules.models import SqlRule
from subscriptions.models import MessageType, Warehouse

from .models import Bin
from .services import run_pick_wave

# warehouse code -> (bin code, stock)
DEMO_BINS: dict[str, list[tuple[str, int]]] = {
    "SH01": [
        ("A-01-01", 40),
        ("A-01-02", 25),
        ("A-01-03", 6),
        ("A-01-04", 60),
        ("A-02-01", 18),
        ("A-02-02", 9),
    ],
    "HH02": [("B-01-01", 30), ("B-01-02", 12), ("B-02-07", 45), ("B-03-05", 7)],
}
# The first wave, run when the bins are created: A-01-03 ends at -12, so the demo shows a
# replenishment notice on the first rules tick after start-up.
FIRST_WAVE = ("SH01", 8812, {"A-01-03": 18, "A-01-01": 5})

SQL_RULE_NAME = "Negative bin stock (SQL)"
# The SQL twin of inventory.rules.NegativeBinStock; data is built with the database's own JSON
# function (SQLite json_object, PostgreSQL json_build_object). It reads business tables only:
# the product's own (subscriptions_warehouse among them) are closed to SQL rules, and
# an alert for an inactive warehouse is not published anyway.
NEGATIVE_STOCK_SQL = """\
SELECT b.warehouse_id AS warehouse_id,
       'Replenish ' || b.code AS title,
       'Stock is ' || b.stock || COALESCE(' after wave ' || CAST(b.last_wave AS TEXT), '') AS body,
       b.code AS key,
       {json}('bin', b.code, 'qty', b.stock) AS data
FROM inventory_bin b
WHERE b.stock < 0
ORDER BY b.code"""
JSON_FUNCTIONS = {"sqlite": "json_object", "postgresql": "json_build_object"}


def negative_stock_sql(using: str | None = None) -> str:
    vendor = connections[using or settings.RULES_SQL_DATABASE].vendor
    return NEGATIVE_STOCK_SQL.format(json=JSON_FUNCTIONS.get(vendor, "json_object"))


def load_demo_inventory(warehouses: Mapping[str, Warehouse], rep_notice: MessageType) -> None:
    """Idempotent: creates what is missing; the first wave runs only when its bins are new."""
    created_codes: set[str] = set()
    for warehouse_code, bins in DEMO_BINS.items():
        warehouse = warehouses.get(warehouse_code)
        if warehouse is None:
            continue
        for code, stock in bins:
            _, created = Bin.objects.get_or_create(
                warehouse=warehouse, code=code, defaults={"stock": stock}
            )
            if created:
                created_codes.add(warehouse_code)
    wave_warehouse, number, picks = FIRST_WAVE
    if wave_warehouse in created_codes:
        run_pick_wave(warehouse=warehouses[wave_warehouse], picks=picks, number=number)

    if not SqlRule.objects.filter(name=SQL_RULE_NAME).exists():
        rule = SqlRule(
            name=SQL_RULE_NAME,
            message_type=rep_notice,
            query=negative_stock_sql(),
            interval_seconds=15,
            # Off, because the Python rule negative_bin_stock raises the same notices; turn
            # this on and add negative_bin_stock to RULES_DISABLED to try the SQL version.
            is_active=False,
            description="The SQL twin of the Python rule negative_bin_stock (inventory/rules.py)."
            " Use the 'Dry run' action to preview what it would send.",
        )
        rule.full_clean()  # the shipped query passes the same checks as one typed in the admin
        rule.save()
