"""Fixtures that put the real Redis into failure states, and restore it afterwards."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import pytest
import redis as redis_py
from redis import Redis

from devredis.embedded_redis import EmbeddedRedis, free_port
from subscriptions.models import Subscription
from tests.waiting import eventually


@pytest.fixture
def redis_config(redis: Redis) -> Iterator[Callable[[str, str], None]]:
    """CONFIG SET for the test; every changed parameter gets its old value back afterwards."""
    saved: dict[str, str] = {}

    def set_config(name: str, value: str) -> None:
        if name not in saved:
            saved[name] = str(redis.config_get(name)[name])
        redis.config_set(name, value)

    yield set_config
    for name, value in saved.items():
        redis.config_set(name, value)


@pytest.fixture
def redis_out_of_memory(redis_config) -> None:
    """Every write is refused with OOM (reads still work), as a full Redis does."""
    redis_config("maxmemory-policy", "noeviction")
    redis_config("maxmemory", "1")


@pytest.fixture
def redis_read_only(redis: Redis) -> Iterator[None]:
    """The server turned into a replica (of a master that is not there): writes get READONLY."""
    redis.replicaof("127.0.0.1", free_port())
    try:
        yield
    finally:
        redis.replicaof("NO", "ONE")


# Spins until SCRIPT KILL, or gives up by itself after 10 s (so a failed test never leaves the
# server blocked). TIME is allowed in scripts since Redis 5 (effects replication).
BUSY_SCRIPT = """
local started = tonumber(redis.call('TIME')[1])
while tonumber(redis.call('TIME')[1]) < started + 10 do end
return 1
"""


@pytest.fixture
def redis_busy(redis_server: EmbeddedRedis, redis_config) -> Iterator[None]:
    """A script runs past lua-time-limit: every other command gets BUSY until it is killed."""
    redis_config("lua-time-limit", "10")
    runner = redis_py.Redis(port=redis_server.port, socket_timeout=30)
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(runner.eval(BUSY_SCRIPT, 0))
        except redis_py.RedisError as exc:  # "Script killed by user"
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    probe = redis_py.Redis(port=redis_server.port, socket_timeout=5)

    def busy() -> bool:
        try:
            probe.ping()
        except redis_py.ResponseError as exc:
            return str(exc).startswith("BUSY")
        return False

    assert eventually(busy, timeout=5)
    try:
        yield
    finally:

        def killed() -> bool:
            with contextlib.suppress(redis_py.ResponseError):  # NOTBUSY: it has ended
                probe.script_kill()
            return not thread.is_alive()

        assert eventually(killed, timeout=15)
        runner.close()
        probe.close()


@pytest.fixture
def subscribed(warehouse, rep_notice, role, make_user, django_capture_on_commit_callbacks):
    """Rita, of the role that receives REP_NOTICE in the warehouse (mirrored into Redis)."""
    with django_capture_on_commit_callbacks(execute=True):
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role)


@pytest.fixture
def queues_consumed(redis: Redis) -> None:
    """Every product queue has a worker, as far as /healthz can tell: the heartbeat a worker
    consuming them all writes (config/queues.py), written here without starting one."""
    from config import queues

    queues.report_consumers(list(queues.product_queues()), "test-worker@localhost")
