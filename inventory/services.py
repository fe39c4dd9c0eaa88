"""Stock changes of the demo: pick waves that lower bin stock, replenishment that raises it."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Max

from config import timestamps
from subscriptions.models import Warehouse

from .models import Bin

FIRST_WAVE_NUMBER = 8801
DEMO_REPLENISH_AFTER = timedelta(minutes=2)


@dataclass(frozen=True)
class PickWave:
    number: int
    warehouse_id: int
    picks: dict[str, int]
    negative: list[str]  # bins below zero after the wave


def next_wave_number() -> int:
    last = Bin.objects.aggregate(last=Max("last_wave"))["last"]
    return FIRST_WAVE_NUMBER if last is None else last + 1


@transaction.atomic
def run_pick_wave(
    *, warehouse: Warehouse | int, picks: Mapping[str, int], number: int | None = None
) -> PickWave:
    """Take the picked quantities (bin code -> units) out of the warehouse's bins.

    As in a real WMS whose records lag the shelves, stock may go below zero: that is exactly
    what the replenishment rule (inventory.rules) looks for.
    """
    warehouse_id = Warehouse.id_of(warehouse)
    for code, quantity in picks.items():
        if not isinstance(quantity, int) or quantity <= 0:
            raise ValueError(f"Pick a positive whole quantity from {code}, not {quantity!r}.")
    bins = {
        b.code: b
        for b in Bin.objects.select_for_update().filter(warehouse_id=warehouse_id, code__in=picks)
    }
    missing = sorted(set(picks) - set(bins))
    if missing:
        raise ValueError(f"No such bins in warehouse {warehouse_id}: {', '.join(missing)}.")
    number = next_wave_number() if number is None else number
    now = timestamps.now()  # update() skips auto_now
    for code, quantity in picks.items():
        Bin.objects.filter(pk=bins[code].pk).update(
            stock=F("stock") - quantity, last_wave=number, updated_at=now
        )
    negative = list(
        Bin.objects.filter(pk__in=[b.pk for b in bins.values()], stock__lt=0)
        .order_by("code")
        .values_list("code", flat=True)
    )
    return PickWave(number=number, warehouse_id=warehouse_id, picks=dict(picks), negative=negative)


def replenish(*, warehouse: Warehouse | int, bin_code: str, quantity: int) -> int:
    """Put `quantity` units into a bin; returns its new stock."""
    warehouse_id = Warehouse.id_of(warehouse)
    updated = Bin.objects.filter(warehouse_id=warehouse_id, code=bin_code).update(
        stock=F("stock") + quantity, updated_at=timestamps.now()
    )
    if not updated:
        raise ValueError(f"No bin {bin_code} in warehouse {warehouse_id}.")
    return Bin.objects.get(warehouse_id=warehouse_id, code=bin_code).stock


def simulate_demo_activity(
    rng: random.Random | None = None, *, replenish_after: timedelta = DEMO_REPLENISH_AFTER
) -> list[PickWave]:
    """One round of demo activity in every active warehouse with bins.

    Some bins negative for longer than `replenish_after` get replenished (their condition
    clears, so a later shortage is news again; the delay lets the rule see every shortage),
    then a pick wave takes from a couple of bins, now and then driving one negative.
    """
    rng = rng or random.Random()  # noqa: S311 (demo activity, not security)
    waves = []
    settled = timestamps.now() - replenish_after
    for warehouse_id in (
        Warehouse.objects.filter(is_active=True, bins__isnull=False)
        .distinct()
        .values_list("id", flat=True)
    ):
        for bin in Bin.objects.filter(
            warehouse_id=warehouse_id, stock__lt=0, updated_at__lt=settled
        ):
            if rng.random() < 0.5:
                replenish(
                    warehouse=warehouse_id,
                    bin_code=bin.code,
                    quantity=-bin.stock + rng.randint(20, 60),
                )
        # Pickers are sent only to bins the records say hold stock, as in a real WMS.
        codes = list(
            Bin.objects.filter(warehouse_id=warehouse_id, stock__gt=0).values_list(
                "code", flat=True
            )
        )
        if codes:
            picked = rng.sample(codes, k=min(2, len(codes)))
            waves.append(
                run_pick_wave(
                    warehouse=warehouse_id, picks={code: rng.randint(4, 18) for code in picked}
                )
            )
    return waves
