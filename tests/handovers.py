"""A shift that has just ended, so that its handover is made."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import Group

from config import timestamps
from shifts import cache, handovers
from shifts.models import Handover, Shift
from subscriptions.models import Warehouse


def end_shift(warehouse: Warehouse, role: Group) -> Handover:
    """The role's Early shift ended a minute ago: its handover is made now."""
    now = timestamps.now().replace(second=0, microsecond=0)
    Shift.objects.create(
        warehouse=warehouse,
        role=role,
        name="Early",
        starts=(now - dt.timedelta(hours=2)).time(),
        ends=(now - dt.timedelta(minutes=1)).time(),
    )
    cache.forget()
    assert handovers.hand_over_due() == 1
    return Handover.objects.get()
