"""redis-py connection classes that count Redis errors for the metrics (wms_redis_errors_total).

Every client of the product's data uses them (django-redis's pool, the cluster client), so the
count covers web requests and Celery tasks alike: failed connects, writes and reads, and the
cluster's CLUSTERDOWN / MASTERDOWN / TRYAGAIN answers. redis-py's own retries count too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from redis.connection import Connection, SSLConnection
from redis.exceptions import ClusterError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from config import metrics

_COUNTED = (RedisConnectionError, RedisTimeoutError, ClusterError, TryAgainError)


@contextmanager
def _counting() -> Iterator[None]:
    try:
        yield
    except _COUNTED as exc:
        metrics.REDIS_ERRORS.labels(error=type(exc).__name__).inc()
        raise


class CountingConnection(Connection):
    def connect(self) -> None:
        with _counting():
            super().connect()

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        with _counting():
            super().send_packed_command(command, check_health)

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        with _counting():
            return super().read_response(*args, **kwargs)


class CountingSSLConnection(SSLConnection, CountingConnection):
    """TLS (`rediss://`): SSLConnection's handshake, CountingConnection's counting."""


def connection_class_for(url: str) -> type[Connection]:
    """The counting class matching the URL's scheme (django-redis's pool takes it as given)."""
    return (
        CountingSSLConnection if urlsplit(url).scheme.startswith("rediss") else CountingConnection
    )
