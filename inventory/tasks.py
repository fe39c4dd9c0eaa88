"""Demo only: the periodic pick wave (scheduled only when WMS_DEMO_PICK_WAVES is set)."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task
def demo_pick_wave() -> dict[str, list[str]]:
    """Lower some demo bins' stock, and replenish some negative ones, in every warehouse."""
    waves = services.simulate_demo_activity()
    return {f"wave {w.number}": w.negative for w in waves}
