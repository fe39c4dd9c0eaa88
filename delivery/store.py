"""The delivery objective's Redis calls (SPEC 16): register a canary, record its arrivals,
read a warehouse's canaries, the stream processes' beats and the last check."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from config.redis import Batch, LuaScript, as_text, get_redis

from . import keys

HOUR_MS = 3_600_000
# Canaries forgotten per registration: more than one interval's worth, so the window keeps up.
FORGET_PER_CALL = 20
# The most canaries one read returns (an hour at a one-second interval).
READ_MAX = 3600

_start = LuaScript.beside(__file__, "start")
_arrive = LuaScript.beside(__file__, "arrive")
_read = LuaScript.beside(__file__, "read")


class Path:
    STREAM = "stream"
    POLL = "poll"


@dataclass(frozen=True)
class Canary:
    token: str
    sent_ms: int
    stream_ms: int | None
    poll_ms: int | None


@dataclass(frozen=True)
class Window:
    """A warehouse's canaries of the last hour, oldest first, read at `now_ms` (Redis's
    clock)."""

    now_ms: int
    canaries: tuple[Canary, ...]

    @property
    def last(self) -> Canary | None:
        return self.canaries[-1] if self.canaries else None


def _pair(warehouse_id: int) -> list[str]:
    return [keys.sent(warehouse_id), keys.arrived(warehouse_id)]


def start(warehouse_id: int, token: str) -> int:
    """Register a canary about to be published; its publish time (ms, Redis's clock)."""
    return int(_start(keys=_pair(warehouse_id), args=[token, HOUR_MS, FORGET_PER_CALL]))


def arrive(warehouse_id: int, token: str, path: str) -> int | None:
    """Record a canary's arrival on `path`; ms from its publish, None for an unknown token."""
    took = _arrive(keys=_pair(warehouse_id), args=[token, path])
    return None if took is None else int(took)


async def arrive_async(
    client: Redis | RedisCluster, script: Any, warehouse_id: int, token: str, path: str
) -> int | None:
    """`arrive` from the event loop (the stream hub): `script` is ARRIVE registered on the
    hub's client."""
    took = await script(keys=_pair(warehouse_id), args=[token, path], client=client)
    return None if took is None else int(took)


ARRIVE_SOURCE = _arrive.source


def windows(warehouse_ids: Sequence[int]) -> dict[int, Window]:
    """Each warehouse's window, in one round trip (one script per warehouse)."""
    batch = Batch()
    for warehouse_id in warehouse_ids:
        batch.script(_read, keys=_pair(warehouse_id), args=[HOUR_MS, READ_MAX])
    found = {}
    for warehouse_id, reply in zip(warehouse_ids, batch.execute(), strict=True):
        now, *rows = reply
        found[warehouse_id] = Window(
            now_ms=int(now),
            canaries=tuple(
                Canary(
                    token=as_text(row[0]),
                    sent_ms=int(row[1]),
                    stream_ms=None if row[2] is None else int(row[2]),
                    poll_ms=None if row[3] is None else int(row[3]),
                )
                for row in rows
            ),
        )
    return found


def server_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _ms(time_reply: tuple[Any, Any]) -> int:
    """Redis's TIME reply (seconds, microseconds) in milliseconds."""
    seconds, micros = time_reply
    return int(seconds) * 1000 + int(micros) // 1000


async def beat_async(client: Redis | RedisCluster, *, stale_ms: int) -> None:
    """This process serves streams: its beat, and the beats older than `stale_ms` dropped."""
    now = _ms(await client.time())
    await client.zadd(keys.stream_servers(), {server_name(): now})
    await client.zremrangebyscore(keys.stream_servers(), "-inf", now - stale_ms)


def stream_servers(*, stale_ms: int) -> int:
    """How many processes that serve streams beat within `stale_ms`."""
    client = get_redis()
    now = _ms(client.time())
    return int(client.zcount(keys.stream_servers(), now - stale_ms, "+inf"))


def save_check(found: dict[str, Any], *, ttl_seconds: int) -> None:
    get_redis().set(keys.checked(), json.dumps(found), ex=max(1, ttl_seconds))


def last_check() -> dict[str, Any] | None:
    raw = get_redis().get(keys.checked())
    return None if raw is None else dict(json.loads(raw))
