"""What each master of a Redis Cluster did between two moments, from its own INFO.

One `INFO all` per master per snapshot (so the probe adds one command per master per
snapshot, subtracted below). `total_commands_processed` counts every command a Lua script runs
as well as the script call itself, so the script calls (EVALSHA and EVAL from
`INFO commandstats`) are given beside it; CPU is the server process's own
`used_cpu_sys + used_cpu_user` (getrusage), which includes reading requests and writing
replies, not only the time inside commands.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import redis

SCRIPT_COMMANDS = ("cmdstat_evalsha", "cmdstat_eval")


@dataclass(frozen=True)
class Snapshot:
    at: float  # time.monotonic()
    commands: int
    script_calls: int
    script_us: int
    cpu_s: float
    keys: int


@dataclass(frozen=True)
class ShardDelta:
    """One master's work over an interval."""

    port: int
    warehouses: list[int]
    keys: int  # at the end of the interval
    commands: int  # incl. the commands scripts ran
    script_calls: int
    script_ms: float  # Redis's own time inside the script calls
    cpu_s: float  # used_cpu_sys + used_cpu_user
    seconds: float

    @property
    def cpu_share(self) -> float:
        """The share of one core this master used over the interval."""
        return self.cpu_s / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cpu_share": self.cpu_share}


def snapshot(client: redis.Redis) -> Snapshot:
    info = client.info("all")
    calls = sum(int(info.get(name, {}).get("calls", 0)) for name in SCRIPT_COMMANDS)
    usec = sum(int(info.get(name, {}).get("usec", 0)) for name in SCRIPT_COMMANDS)
    keys = sum(int(v.get("keys", 0)) for k, v in info.items() if k.startswith("db"))
    return Snapshot(
        at=time.monotonic(),
        commands=int(info["total_commands_processed"]),
        script_calls=calls,
        script_us=usec,
        cpu_s=float(info["used_cpu_sys"]) + float(info["used_cpu_user"]),
        keys=keys,
    )


def delta(port: int, warehouses: list[int], before: Snapshot, after: Snapshot) -> ShardDelta:
    return ShardDelta(
        port=port,
        warehouses=warehouses,
        keys=after.keys,
        commands=after.commands - before.commands - 1,  # the first snapshot's own INFO
        script_calls=after.script_calls - before.script_calls,
        script_ms=(after.script_us - before.script_us) / 1000,
        cpu_s=after.cpu_s - before.cpu_s,
        seconds=after.at - before.at,
    )


def spread(values: list[float]) -> float:
    """max / min over the masters; infinite when one master did nothing."""
    low, high = min(values), max(values)
    if high == 0:
        return 1.0
    return high / low if low > 0 else float("inf")
