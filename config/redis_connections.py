"""redis-py connection classes that count Redis errors for the metrics (wms_redis_errors_total).

Every client of the product's data uses them (django-redis's pool, the cluster client), so the
count covers web requests and Celery tasks alike: failed connects, writes and reads, and the
cluster's CLUSTERDOWN / MASTERDOWN / TRYAGAIN answers. redis-py's own retries count too.

They also pack a command's arguments with hiredis in one call where redis-py would first look at
each argument in Python (see _Packer).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import hiredis
from redis.connection import Connection, HiredisRespSerializer, SSLConnection
from redis.exceptions import ClusterError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from config import metrics

_COUNTED = (RedisConnectionError, RedisTimeoutError, ClusterError, TryAgainError)


def _count(exc: BaseException) -> None:
    metrics.REDIS_ERRORS.labels(error=type(exc).__name__).inc()


@contextmanager
def _counting() -> Iterator[None]:
    try:
        yield
    except _COUNTED as exc:
        _count(exc)
        raise


# Arguments redis-py turns into bytes before hiredis packs them.
_BUFFERS = frozenset({bytearray, memoryview})


class _Packer(HiredisRespSerializer):
    """redis-py's hiredis packer, without its per-argument work where it would change nothing.

    redis-py splits a command name given as text ("SCRIPT LOAD") into words and makes bytes of
    every bytearray or memoryview argument, in a Python loop over the arguments: for a script
    call with a hundred inbox keys, that loop cost twice hiredis's packing. A name of letters
    only has nothing to split and, with no such argument (a check made in C), hiredis gets the
    arguments as they are: the same bytes. Anything else, and any argument hiredis refuses
    (raised as redis-py's DataError), goes through redis-py's own packing.
    """

    def pack(self, *args: Any) -> list[bytes]:
        name = args[0]
        if type(name) is str and name.isalpha() and _BUFFERS.isdisjoint(map(type, args)):
            try:
                return [hiredis.pack_command(args)]
            except TypeError:
                pass
        return super().pack(*args)


class CountingConnection(Connection):
    def __init__(self, *args: Any, command_packer: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, command_packer=command_packer or _Packer(), **kwargs)

    def connect(self) -> None:
        with _counting():
            super().connect()

    # The two calls of every command count their errors inline (a `with _counting()` around
    # each cost a command about 1.4 µs of generator set-up).
    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        try:
            super().send_packed_command(command, check_health)
        except _COUNTED as exc:
            _count(exc)
            raise

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)
        except _COUNTED as exc:
            _count(exc)
            raise


class CountingSSLConnection(SSLConnection, CountingConnection):
    """TLS (`rediss://`): SSLConnection's handshake, CountingConnection's counting."""


def connection_class_for(url: str) -> type[Connection]:
    """The counting class matching the URL's scheme (django-redis's pool takes it as given)."""
    return (
        CountingSSLConnection if urlsplit(url).scheme.startswith("rediss") else CountingConnection
    )
