"""Marks every beat entry so its task runs once per tick however many beats send it
(see config/beat.py). Kept apart so that settings can import it without importing Celery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The message header carrying the entry's interval in seconds (beat-sent messages only).
TICK_HEADER = "wms_tick_seconds"


def once_per_tick(schedule: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The beat schedule with each entry's messages carrying TICK_HEADER (same task, timing)."""
    marked = {}
    for name, entry in schedule.items():
        interval = entry["schedule"]
        if isinstance(interval, bool) or not isinstance(interval, int | float):
            raise TypeError(f"Beat entry {name!r}: only intervals in seconds can be guarded")
        options = dict(entry.get("options", {}))
        options["headers"] = {**options.get("headers", {}), TICK_HEADER: float(interval)}
        marked[name] = {**entry, "options": options}
    return marked


def register(name: str, *, task: str, seconds: float, expires: bool | float = True) -> None:
    """Add an app's beat entry, from its AppConfig.ready(): each app names its own tasks, and
    `config/` none. `expires`: a tick queued while no worker ran is dropped (the next one
    finds what is due) after the interval (True) or after this many seconds (a number);
    False keeps it. A non-positive interval adds nothing (the feature is off)."""
    if seconds <= 0:
        return
    from config.celery import app

    entry: dict[str, Any] = {"task": task, "schedule": float(seconds)}
    if expires is not False:
        entry["options"] = {"expires": float(seconds if expires is True else expires)}
    app.conf.beat_schedule.update(once_per_tick({name: entry}))
