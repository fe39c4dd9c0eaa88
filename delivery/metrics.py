"""The delivery objective's Prometheus histogram (SPEC 16): observed by the process that
records a canary's arrival (a stream process's hub, or the worker that polls)."""

from prometheus_client import Histogram

DELIVERY_SECONDS = Histogram(
    "wms_delivery_seconds",
    "Seconds from a canary's publish to its arrival, by warehouse (id) and path (stream, poll).",
    ["warehouse", "path"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
)
