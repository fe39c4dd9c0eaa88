"""What the benchmarks read off Redis and redis-py: server time of calls, and round trips.

**Redis time** comes from `INFO commandstats` deltas (the server's own microseconds per
command), counting only the commands this process sent. That matters because Redis also books
every command a Lua script runs (and every command inside MULTI/EXEC) under its own name, and
the script's time already contains them. So each command name's time is attributed in
proportion to how many of its calls this process sent itself (`Wire` keeps what went out):
EVALSHA fully, a ZADD run only inside a script not at all, a pipelined ZADD fully. MULTI and
EXEC are containers and left out (their commands are counted one by one).

The slow log is not used for totals: with its threshold at 0 Redis 6.2 logs every command a
script runs as an entry of its own, which costs about 2 µs each and would make a script
doing thousands of commands look 40% slower than it is. It is used, with a threshold of
100 µs, only for the slowest single call; calls of real clients only (a script's commands are
logged by a client at "?:0").
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import redis
from redis.connection import AbstractConnection

PROBE_NAME = "bench-probe"
LUA_CLIENT = "?:0"
CONTAINERS = {"MULTI", "EXEC"}
# What the probe itself sends (RESETSTAT is counted once it has run), left out of `executed`.
PROBES_OWN = CONTAINERS | {"CONFIG", "INFO", "SLOWLOG", "CLIENT"}
SLOW_US = 100


class Wire:
    """Counts the requests this process writes to Redis (a pipeline is one), per thread, and
    while capturing keeps what was written, to learn which commands were sent."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._original: Any = None
        self.capturing = False
        self.sent: list[Any] = []

    @property
    def count(self) -> int:
        return getattr(self._local, "n", 0)

    def reset(self) -> None:
        self._local.n = 0

    def install(self) -> None:
        """Wrap redis-py's one method every request passes through (as tests/messaging do)."""
        if self._original is not None:
            return
        original = self._original = AbstractConnection.send_packed_command
        wire = self

        def counting(conn: AbstractConnection, command: Any, check_health: bool = True) -> None:
            wire._local.n = getattr(wire._local, "n", 0) + 1
            if wire.capturing:
                wire.sent.append(command)  # parsed later: keep the measured path cheap
            return original(conn, command, check_health)

        AbstractConnection.send_packed_command = counting  # type: ignore[method-assign]

    def uninstall(self) -> None:
        if self._original is not None:
            AbstractConnection.send_packed_command = self._original  # type: ignore[method-assign]
            self._original = None

    def take_names(self) -> Counter[str]:
        """Names of the commands written since the last call (MULTI and EXEC left out)."""
        names: Counter[str] = Counter()
        for packed in self.sent:
            names.update(command_names(_joined(packed)))
        self.sent = []
        for container in CONTAINERS:
            names.pop(container, None)
        return names


def _joined(packed: Any) -> bytes:
    if isinstance(packed, str):
        return packed.encode()
    if isinstance(packed, bytes | bytearray | memoryview):
        return bytes(packed)
    return b"".join(bytes(chunk) for chunk in packed)


def command_names(packed: bytes) -> Iterator[str]:
    """The command names in RESP-encoded requests (`*<n>\\r\\n$<len>\\r\\n<name>...`)."""
    i, end = 0, len(packed)
    while i < end:
        j = packed.index(b"\r\n", i)
        count = int(packed[i + 1 : j])
        i = j + 2
        name = b""
        for k in range(count):
            j = packed.index(b"\r\n", i)
            length = int(packed[i + 1 : j])
            if k == 0:
                name = packed[j + 2 : j + 2 + length]
            i = j + 2 + length + 2
        yield name.decode(errors="replace").upper()


wire = Wire()


@dataclass(frozen=True)
class RedisTime:
    """Server time of the commands this process sent while the probe listened."""

    calls: int  # commands sent (MULTI/EXEC left out)
    total_us: float
    slowest_us: int  # 0 when no call reached the slow log's threshold
    slowest_command: str
    slow_threshold_us: int
    by_command: dict[str, float]  # the time attributed to each command name
    # Every command Redis ran meanwhile, a script's own commands included (the probe's own and
    # MULTI/EXEC left out): the work behind the calls, steadier than their time.
    executed: int = 0


class RedisProbe:
    """Reads Redis's own accounting of the commands this process sends."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url, socket_timeout=60)
        self.client.client_setname(PROBE_NAME)
        self.slow_us = SLOW_US
        wire.install()

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        """The probe's own commands are not what is measured."""
        was, wire.capturing = wire.capturing, False
        try:
            yield
        finally:
            wire.capturing = was

    @contextlib.contextmanager
    def listening(self, slow_us: int = SLOW_US, *, capture: bool = True) -> Iterator[None]:
        """Measure within: slow log at `slow_us`; `capture=False` keeps no copy of what is
        sent (for long runs that only need the slowest call), so `total_us` stays 0."""
        self.slow_us = slow_us
        with self._quiet():
            self.client.config_set("slowlog-log-slower-than", slow_us)
            self.client.config_set("slowlog-max-len", 100_000)
        self.reset()
        wire.capturing = capture
        try:
            yield
        finally:
            wire.capturing = False
            wire.sent = []
            self.client.config_set("slowlog-log-slower-than", 10_000)
            self.client.config_set("slowlog-max-len", 128)
            self.client.slowlog_reset()

    def reset(self) -> None:
        """Start counting afresh."""
        with self._quiet():
            self.client.config_resetstat()
            self.client.slowlog_reset()
            wire.sent = []

    def read(self) -> RedisTime:
        """What was sent since the last reset or read (and resets)."""
        with self._quiet():
            stats = self.client.info("commandstats")
            slow = self.client.slowlog_get(100_000)
            sent = wire.take_names()
            self.client.config_resetstat()
            self.client.slowlog_reset()
        spent: dict[str, float] = {}
        for name, count in sent.items():
            stat = stats.get(f"cmdstat_{name.lower()}")
            if stat and stat["calls"]:
                spent[name] = stat["usec"] * min(1.0, count / stat["calls"])
        slowest, slowest_command = _slowest(slow)
        executed = sum(
            int(stat["calls"])
            for name, stat in stats.items()
            if name.startswith("cmdstat_")
            and name.removeprefix("cmdstat_").split("|")[0].upper() not in PROBES_OWN
        )
        return RedisTime(
            calls=sum(sent.values()),
            total_us=sum(spent.values()),
            slowest_us=slowest,
            slowest_command=slowest_command,
            slow_threshold_us=self.slow_us,
            by_command=spent,
            executed=executed,
        )

    def used_memory(self) -> int:
        with self._quiet():
            return int(self.client.info("memory")["used_memory"])


def _slowest(entries: Iterable[dict[str, Any]]) -> tuple[int, str]:
    slowest, command = 0, ""
    for entry in entries:
        if _text(entry.get("client_address")) == LUA_CLIENT:
            continue
        if _text(entry.get("client_name")) == PROBE_NAME:
            continue
        text = _text(entry["command"])
        if text.split(" ", 1)[0].upper() in CONTAINERS:
            continue
        if int(entry["duration"]) > slowest:
            slowest, command = int(entry["duration"]), text[:60]
    return slowest, command


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


# --- CPU spent by processes -----------------------------------------------------------------


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user and system) of a process and its children, e.g. a server and its
    workers, from Linux's /proc."""
    parents: dict[int, int] = {}
    spent: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        spent[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, wanted = 0.0, {root}
    for pid in sorted(parents):  # children have higher ids than the parent here
        if pid in wanted or parents[pid] in wanted:
            wanted.add(pid)
            total += spent[pid]
    return total


def redis_cpu_seconds(client: redis.Redis) -> float:
    """CPU seconds (user and system) the Redis server has used so far (`INFO cpu`)."""
    info = client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
