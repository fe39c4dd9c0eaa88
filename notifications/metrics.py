"""Read-model figures /metrics reads when scraped: how far the expiry sweep is behind."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from config import timestamps
from config.redis import REDIS_UNAVAILABLE
from subscriptions.models import Warehouse

from . import store

logger = logging.getLogger(__name__)

# Redis or the database out of reach: the figure is left out, the scrape still answers.
_UNAVAILABLE: tuple[type[Exception], ...] = (*REDIS_UNAVAILABLE, DatabaseError)


class ExpiredUnswept(Collector):
    """wms_expired_unswept{warehouse}: notifications past their expiry that the sweep has not
    removed yet. Polls leave at most NOTIFICATION_POLL_EXPIRED_SCAN of them out of their counts
    (their work must not grow with the backlog), so a value above that is a sweep to look at."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "wms_expired_unswept",
            "Expired notifications the expiry sweep has not removed yet, per warehouse.",
            labels=["warehouse"],
        )
        try:
            ids = list(Warehouse.objects.values_list("id", flat=True))
            counts = store.expired_unswept_many(ids, now_ms=timestamps.now_ms())
        except _UNAVAILABLE as exc:
            logger.warning("wms_expired_unswept left out of /metrics: %s", exc)
            return
        for warehouse_id, count in counts.items():
            family.add_metric([str(warehouse_id)], count)
        yield family
