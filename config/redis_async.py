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
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

# Schemes of a Redis Cluster URL (`redis+cluster://host:port[,host:port...]`). PUBLISH is
# broadcast to every node of a cluster, so a pattern subscription on any one node hears every
# channel: the stream connects to the first node named.
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


def _single_node_url(url: str) -> str:
    parts = urlsplit(url)
    scheme = CLUSTER_SCHEMES.get(parts.scheme)
    if scheme is None:
        return url
    netloc = parts.netloc.split(",")[0]
    return urlunsplit((scheme, netloc, "/0", "", ""))


def async_redis(*, pubsub: bool = False, max_connections: int = 20) -> Redis | RedisCluster:
    """A redis.asyncio client on settings.REDIS_URL.

    pubsub=True: for one long-lived subscription. No read timeout (it waits for messages;
    health-check PINGs find a dead connection) and no automatic retry: a retrying client would
    reconnect and subscribe again silently, and events published meanwhile would be lost
    without the streams knowing. The caller sees the error and ends its streams instead, and
    their clients reconnect and replay.
    """
    no_retry = Retry(NoBackoff(), 0)
    if not pubsub and urlsplit(settings.REDIS_URL).scheme in CLUSTER_SCHEMES:
        # Data reads (a warehouse's sequence, content and read marks: one slot) follow the
        # cluster's slot map.
        return RedisCluster.from_url(
            _single_node_url(settings.REDIS_URL),
            socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
            socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        )
    if pubsub:
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
