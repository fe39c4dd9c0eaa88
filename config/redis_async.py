"""The asyncio Redis clients of the event stream (one process's pub/sub, and its small pool).

The rest of the product talks to Redis through django-redis's synchronous pool
(config.redis.get_redis). The stream runs in the ASGI event loop and needs redis.asyncio
instead; every such client is built here, from the same settings, so a change of deployment
(Redis Cluster, TLS, timeouts) is made in one place.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

# Schemes of a Redis Cluster URL (`redis+cluster://host:port[,host:port...]`).
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


def _single_node_url(url: str) -> str:
    parts = urlsplit(url)
    scheme = CLUSTER_SCHEMES.get(parts.scheme)
    if scheme is None:
        return url
    netloc = parts.netloc.split(",")[0]
    return urlunsplit((scheme, netloc, "/0", "", ""))


def cluster_nodes() -> list[tuple[str, int]]:
    """The startup nodes of REDIS_URL in cluster mode (empty on one Redis)."""
    return list(settings.REDIS_CLUSTER_NODES) if settings.REDIS_CLUSTER else []


def _credentials() -> tuple[str | None, str | None]:
    """(username, password) of REDIS_URL in cluster mode."""
    options = settings.REDIS_CLUSTER_OPTIONS
    username, password = options.get("username"), options.get("password")
    return (str(username) if username else None, str(password) if password else None)


def async_redis(
    *, pubsub: bool = False, max_connections: int = 20, node: tuple[str, int] | None = None
) -> Redis | RedisCluster:
    """A redis.asyncio client on settings.REDIS_URL.

    pubsub=True: for one long-lived subscription, on `node` (host, port) when given (on a
    cluster the hub picks a live node: PUBLISH reaches every node of a cluster, so a pattern
    subscription on any one of them hears every channel), else on the first node of the URL.
    No read timeout (it waits for messages; health-check PINGs find a dead connection) and no
    automatic retry: a retrying client would reconnect and subscribe again silently, and
    events published meanwhile would be lost without the streams knowing. The caller sees the
    error and ends its streams instead, and their clients reconnect and replay.
    """
    no_retry = Retry(NoBackoff(), 0)
    if not pubsub and settings.REDIS_CLUSTER:
        # Data reads (a warehouse's sequence, content and read marks: one slot) follow the
        # cluster's slot map, found from any startup node that answers (not only the first:
        # that one may be the node that just died).
        username, password = _credentials()
        return RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in cluster_nodes()],
            username=username,
            password=password,
            ssl=bool(settings.REDIS_CLUSTER_OPTIONS.get("ssl")),
            socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
            socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        )
    if pubsub:
        if node is None and settings.REDIS_CLUSTER:
            node = cluster_nodes()[0]
        if node is not None:
            username, password = _credentials()
            return Redis(
                host=node[0],
                port=node[1],
                username=username,
                password=password,
                ssl=bool(settings.REDIS_CLUSTER_OPTIONS.get("ssl")),
                socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
                socket_timeout=None,
                health_check_interval=10,
                retry=no_retry,
            )
        return Redis.from_url(
            _single_node_url(settings.REDIS_URL),
            socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
            socket_timeout=None,
            health_check_interval=10,
            retry=no_retry,
        )
    pool = BlockingConnectionPool.from_url(
        _single_node_url(settings.REDIS_URL),
        max_connections=max_connections,
        timeout=settings.REDIS_SOCKET_TIMEOUT,
        socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        retry=no_retry,
    )
    return Redis(connection_pool=pool)
