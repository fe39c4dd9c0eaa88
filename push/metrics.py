"""Web Push counters on /metrics (prometheus-client; see config.metrics for multi-process)."""

from __future__ import annotations

from prometheus_client import Counter

PUSHES = Counter(
    "wms_push_requests",
    "Posts to push services, by outcome: `sent`; `gone` (404/410: the subscription was "
    "deleted); `retried` (no answer, 429 or 5xx: tried again later); `failed` (refused, or "
    "still failing after the last retry); `skipped` (expired meanwhile, or the endpoint's host "
    "is no longer allowed); `off_shift` (not posted: the user is off shift and the alert is not "
    "critical).",
    ["outcome"],
)
QUEUE_ERRORS = Counter(
    "wms_push_queue_errors",
    "Push tasks the broker would not take (the publish or escalation itself went through).",
)
