"""Prometheus metrics of the product (prometheus-client), and the middleware timing requests.

With several processes (web workers, Celery workers) set PROMETHEUS_MULTIPROC_DIR to an empty
folder shared by the processes of one host before they start: each process then writes its
samples there and `/metrics` on any web process reports the sum (see docs/operating/deploy.md). Only
counters and histograms are used, which add up across processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter, Histogram
from prometheus_client.registry import Collector

REQUESTS = Counter(
    "wms_http_requests",
    "HTTP requests answered, by method, view (URL name) and status code.",
    ["method", "view", "status"],
)
REQUEST_SECONDS = Histogram(
    "wms_http_request_duration_seconds",
    "Time from request to response, by method and view.",
    ["method", "view"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
PUBLISHES = Counter(
    "wms_notifications_published",
    "Notifications published, by message type.",
    ["message_type"],
)
DELIVERIES = Counter(
    "wms_notification_deliveries",
    "Inbox entries written by publishing (one per subscriber of each notification).",
)
POLLS = Counter(
    "wms_polls",
    "Notification polls served: `list` (the inbox) and `unread` (the bell).",
    ["kind"],
)
REDIS_ERRORS = Counter(
    "wms_redis_errors",
    "Redis unreachable, timing out or failing over, seen by script calls and batches.",
    ["error"],
)
STREAM_SUBSCRIPTIONS = Counter(
    "wms_stream_subscriptions",
    "The stream hub's pub/sub subscription: `subscribed` (made, or made again on a live node "
    "after a loss) and `lost`.",
    ["event"],
)
REPLICATION_SHORTFALLS = Counter(
    "wms_replication_shortfalls",
    "Writes that fewer than REDIS_WAIT_REPLICAS replicas acknowledged in time, by what was "
    "done: `accepted` (REDIS_WAIT_POLICY=degrade) or `refused` (503).",
    ["outcome"],
)
IDEMPOTENT_REPLAYS = Counter(
    "wms_idempotent_replays",
    "Writes answered from their Idempotency-Key record instead of being stored again.",
    ["operation"],
)
PERIODIC_SECONDS = Histogram(
    "wms_periodic_task_duration_seconds",
    "Duration of each periodic (beat) task run: sweeps, reconcile, rules.",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900),
)
PERIODIC_RUNS = Counter(
    "wms_periodic_task_runs",
    "Periodic task invocations: `ran`, `failed`, or `skipped` (another beat's run had the tick).",
    ["task", "outcome"],
)


# Collectors that read the state of the data when /metrics is scraped (apps add theirs in
# `ready()`), rather than counting in a process: e.g. what the expiry sweep has yet to remove.
LIVE_COLLECTORS: list[Collector] = []


class MetricsMiddleware:
    """Counts and times every request under its URL name (never the raw path: bounded labels)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name or match.route) if match else "unmatched"
        REQUEST_SECONDS.labels(request.method, view).observe(time.perf_counter() - started)
        REQUESTS.labels(request.method, view, str(response.status_code)).inc()
        return response
