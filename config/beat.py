"""Each periodic task runs once per tick however many beats send it.

Exactly one `celery beat` should run, but two started by mistake (a second host, a deploy that
overlapped) must not run every sweep and rule twice. Settings mark every beat entry's messages
with its interval (config/beat_schedule.py); the Celery app's task class below claims the tick
with `SET <key> <token> NX PX <nine tenths of the interval>` before running such a message: of
two beats' messages for one tick, the first claims it and the second is skipped. The claim is not
released after the run, so a late duplicate is skipped too; it lapses before the next tick.
Calls that do not come from beat (`.delay()`, `.apply()`, a direct call) are never skipped.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from celery import Task
from django.conf import settings

from config import metrics
from config.beat_schedule import TICK_HEADER, once_per_tick
from config.redis import get_redis

logger = logging.getLogger(__name__)


def tick_key(task_name: str) -> str:
    """The claim of a periodic task's current tick (one key: any cluster slot will do)."""
    return f"{settings.WMS_REDIS_PREFIX}:beat:{task_name}"


def claim_tick(task_name: str, *, interval_seconds: float) -> bool:
    """True for the first caller of this tick; False while an earlier claim holds."""
    hold_ms = max(1000, int(interval_seconds * 900))  # nine tenths of the interval, >= 1 s
    return bool(get_redis().set(tick_key(task_name), uuid.uuid4().hex, nx=True, px=hold_ms))


class OncePerTickTask(Task):
    """The project's Celery task class: a beat-sent run claims its tick first (see above)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        headers = None if self.request.called_directly else self.request.headers
        interval = (headers or {}).get(TICK_HEADER)
        if interval is None:
            return super().__call__(*args, **kwargs)
        if not claim_tick(self.name, interval_seconds=float(interval)):
            metrics.PERIODIC_RUNS.labels(self.name, "skipped").inc()
            logger.info("%s: this tick already ran (a second beat?), skipped", self.name)
            return {"skipped": "this tick already ran"}
        started = time.perf_counter()
        try:
            result = super().__call__(*args, **kwargs)
        except Exception:
            metrics.PERIODIC_RUNS.labels(self.name, "failed").inc()
            raise
        finally:
            metrics.PERIODIC_SECONDS.labels(self.name).observe(time.perf_counter() - started)
        metrics.PERIODIC_RUNS.labels(self.name, "ran").inc()
        return result


def add_entries(schedule: dict[str, dict[str, Any]]) -> None:
    """An app's own beat entries, added from its `AppConfig.ready()` (as Django's admin and
    checks register): marked once per tick like the settings' entries, and put in the Celery
    app's schedule (the same dict as settings.CELERY_BEAT_SCHEDULE), which `celery beat` reads
    after Django is set up."""
    from config.celery import app

    app.conf.beat_schedule.update(once_per_tick(schedule))
