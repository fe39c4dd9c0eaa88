"""Operational endpoints: `/healthz` for load balancers and `/metrics` for Prometheus.

Plain Django views (not DRF): no authentication, no throttle, no session; each is cheap.
"""

from __future__ import annotations

import hmac
import logging
import os
from collections.abc import Callable

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)
from redis.cluster import RedisCluster

from config import queues, status
from config.metrics import LIVE_COLLECTORS
from config.redis import REDIS_UNAVAILABLE, REPLICATION, get_redis, online_replicas

logger = logging.getLogger(__name__)

# The apps' parts of `degraded`, added in their AppConfig.ready() (config imports no app).
_degraded_checks: dict[str, Callable[[], str]] = {}


def add_degraded_check(name: str, check: Callable[[], str]) -> None:
    """Name in /healthz's `degraded` what `check()` answers ("" when nothing is degraded), e.g.
    subscriptions' `mirror`. Asked at each /healthz, after the process's flags and replication."""
    _degraded_checks[name] = check


def _check_database() -> str:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def _check_redis() -> str:
    client = get_redis()
    if isinstance(client, RedisCluster):
        # Every master: a shard that is down makes its warehouses' requests fail.
        client.ping(target_nodes=RedisCluster.PRIMARIES)
    else:
        client.ping()
    return "ok"


def _degraded() -> dict[str, str]:
    """What works but not fully, by name (see docs/operating/scaling.md, "What an operator sees"):

    - `subscription`: this process's stream hub has no live pub/sub subscription (streams
      answer 503 and clients poll) — from the hub, config.status;
    - `replication`: a master has fewer online replicas than REDIS_WAIT_REPLICAS, or a write
      went unconfirmed by them lately (REDIS_WAIT_POLICY decides what publishing does);
    - `mirror`: subscriber sets are being rebuilt from the database (publishing to them waits
      for it or answers 503) — subscriptions/health.py, through add_degraded_check;
    - `queues`: queues of the product's tasks that no worker consumes (their tasks wait) —
      config/queues.py, from the workers' heartbeats (one Redis call).
    """
    found = status.degraded()
    waiting = queues.degraded()
    if waiting:
        found[queues.QUEUES] = waiting
    if settings.REDIS_WAIT_REPLICAS > 0:
        short = _masters_short_of_replicas()
        if short:
            found[REPLICATION] = short
    for name, check in _degraded_checks.items():
        detail = check()
        if detail:
            found[name] = detail
    return found


def _masters_short_of_replicas() -> str:
    client = get_redis()
    masters = (
        [client.get_redis_connection(node) for node in client.get_primaries()]
        if isinstance(client, RedisCluster)
        else [client]
    )
    wanted = settings.REDIS_WAIT_REPLICAS
    short = []
    for master in masters:
        online = online_replicas(master)
        if online < wanted:
            kwargs = master.connection_pool.connection_kwargs
            short.append(f"{kwargs.get('host')}:{kwargs.get('port')} has {online}")
    if not short:
        return ""
    return (
        f"REDIS_WAIT_REPLICAS={wanted} cannot be met ({settings.REDIS_WAIT_POLICY}): "
        + ", ".join(short)
    )


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and Redis answer, else 503; the JSON says which failed.

    Status "degraded" (still 200: requests are served) names in `degraded` what does not
    fully work: instant delivery, replication, the subscription mirror, queues without a
    worker (_degraded).
    """
    checks: dict[str, str] = {}
    for name, check in (("database", _check_database), ("redis", _check_redis)):
        try:
            checks[name] = check()
        except Exception as exc:  # any failure is an answer here, never a 500
            if not isinstance(exc, REDIS_UNAVAILABLE):
                logger.warning("Health check %s failed: %r", name, exc)
            checks[name] = f"error: {type(exc).__name__}"
    healthy = all(value == "ok" for value in checks.values())
    degraded: dict[str, str] = {}
    if healthy:
        try:
            degraded = _degraded()
        except Exception as exc:
            if not isinstance(exc, REDIS_UNAVAILABLE):
                logger.warning("Health check of degradation failed: %r", exc)
            degraded = {"redis": f"error: {type(exc).__name__}"}
    state = "unavailable" if not healthy else "degraded" if degraded else "ok"
    return JsonResponse(
        {"status": state, "checks": checks, "degraded": degraded},
        status=200 if healthy else 503,
    )


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text format; all processes of the host when PROMETHEUS_MULTIPROC_DIR is set.

    Scrapers send `Authorization: Bearer <METRICS_TOKEN>`; a signed-in staff user may look too.
    With DEBUG off and no METRICS_TOKEN set, nobody else gets in (a production default must
    not publish the site's traffic to anyone); with DEBUG on and no token, it is open.
    """
    token = settings.METRICS_TOKEN
    sent = request.headers.get("Authorization", "")
    scraper = bool(token) and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())
    staff = getattr(request.user, "is_staff", False) and request.user.is_active
    if not (scraper or staff or (settings.DEBUG and not token)):
        return HttpResponse(
            "Unauthorized: send Authorization: Bearer <METRICS_TOKEN>, or sign in as staff.\n",
            status=401,
            content_type="text/plain",
        )
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    live = CollectorRegistry(auto_describe=False)
    for collector in LIVE_COLLECTORS:
        live.register(collector)
    body = generate_latest(registry) + generate_latest(live)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
