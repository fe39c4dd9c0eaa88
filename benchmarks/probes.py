"""What the benchmarks read off Redis and redis-py: server time of calls, and round trips.

Redis time comes from SLOWLOG with a threshold of 0 µs: every call a client sends is logged
with its execution time on the server. On Redis 6.2 the commands a Lua script runs are logged
too, by a client whose address is "?:0", and so are the commands inside MULTI/EXEC (EXEC itself
is not logged); counting only the calls of real clients therefore counts each moment of
server time once. The probe's own commands (SLOWLOG, CONFIG, INFO) run on a connection named
`bench-probe` and are left out.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import redis
from redis.connection import AbstractConnection

PROBE_NAME = "bench-probe"
LUA_CLIENT = "?:0"


@dataclass(frozen=True)
class RedisTime:
    """Server time of the calls made while a probe listened."""

    calls: int
    total_us: int
    slowest_us: int
    slowest_command: str


class RedisProbe:
    """Reads the server time of everything other clients send, from SLOWLOG."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url, socket_timeout=60)
        self.client.client_setname(PROBE_NAME)

    def on(self, threshold_us: int = 0) -> None:
        """Log every call (or every call of at least `threshold_us`, to keep a long run's log
        small: on Redis 6.2 each command a script runs is an entry of its own)."""
        self.client.config_set("slowlog-log-slower-than", threshold_us)
        self.client.config_set("slowlog-max-len", 2_000_000)
        self.client.slowlog_reset()

    def off(self) -> None:
        self.client.config_set("slowlog-log-slower-than", 10_000)
        self.client.config_set("slowlog-max-len", 128)
        self.client.slowlog_reset()

    def reset(self) -> None:
        self.client.slowlog_reset()

    def read(self) -> RedisTime:
        """The calls logged since the last reset (which this also does)."""
        entries = self.client.slowlog_get(2_000_000)
        self.client.slowlog_reset()
        calls = total = slowest = 0
        slowest_command = ""
        for entry in entries:
            address = _text(entry.get("client_address", b""))
            name = _text(entry.get("client_name", b""))
            if address == LUA_CLIENT or name == PROBE_NAME:
                continue
            command = _text(entry["command"])
            if command.split(" ", 1)[0].upper() in {"MULTI", "EXEC", "SLOWLOG"}:
                continue
            duration = int(entry["duration"])
            calls += 1
            total += duration
            if duration > slowest:
                slowest, slowest_command = duration, command[:60]
        return RedisTime(calls, total, slowest, slowest_command)

    def used_memory(self) -> int:
        return int(self.client.info("memory")["used_memory"])

    @contextlib.contextmanager
    def listening(self, threshold_us: int = 0) -> Iterator[None]:
        self.on(threshold_us)
        try:
            yield
        finally:
            self.off()


class RoundTrips:
    """Counts requests written to Redis by this process (a pipeline is one), per thread."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._installed = False

    @property
    def count(self) -> int:
        return getattr(self._local, "n", 0)

    def reset(self) -> None:
        self._local.n = 0

    def install(self) -> None:
        """Wrap redis-py's one method every request passes through (as tests/messaging do)."""
        if self._installed:
            return
        original = AbstractConnection.send_packed_command
        local = self._local

        def counting(conn: AbstractConnection, command: object, check_health: bool = True) -> None:
            local.n = getattr(local, "n", 0) + 1
            return original(conn, command, check_health)

        AbstractConnection.send_packed_command = counting  # type: ignore[method-assign]
        self._installed = True


round_trips = RoundTrips()


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
