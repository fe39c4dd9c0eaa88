"""Outbox figures on /metrics: attempts by kind and outcome, and what waits, by kind and status."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

ATTEMPTS = Counter(
    "wms_outbox_attempts",
    "Outbox sends (webhooks, e-mails) by kind and outcome: `succeeded`; `retried` (no answer, "
    "a timeout or a 5xx: tried again after a back-off); `failed` (refused, or the last attempt "
    "failed); `lost` (a worker died holding it: sent again after its lease).",
    ["kind", "outcome"],
)
QUEUE_ERRORS = Counter(
    "wms_outbox_queue_errors",
    "Outbox tasks the broker would not take (the message waits in the database for the next pass).",
)


class Waiting(Collector):
    """Outbox messages by kind and status not yet finished (pending, sending), and failed ones,
    read from the database when /metrics is scraped (one grouped query)."""

    def collect(self) -> Iterator[Metric]:
        from django.db import DatabaseError
        from django.db.models import Count

        from .models import OutboxMessage, Status

        family = GaugeMetricFamily(
            "wms_outbox_messages",
            "Outbox messages by kind and status (pending, sending, failed).",
            labels=["kind", "status"],
        )
        try:
            rows = (
                OutboxMessage.objects.filter(
                    status__in=[Status.PENDING, Status.SENDING, Status.FAILED]
                )
                .values("kind", "status")
                .annotate(n=Count("id"))
            )
            for row in rows:
                family.add_metric([row["kind"], row["status"]], row["n"])
        except DatabaseError:
            return
        yield family
