"""What a call costs Redis in commands: `INFO commandstats` counts every command a Lua script runs
as well as the EVALSHA that runs it, so the difference around a call is its whole work on the
server (a single Redis: on a cluster each node counts its own)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def commands(redis: Any) -> Counter[str]:
    """Calls of each command so far, by name ("zadd", "evalsha")."""
    stats = redis.info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): s["calls"] for name, s in stats.items()})


def commands_of(redis: Any, call: Callable[[], T]) -> tuple[T, Counter[str]]:
    """`call()`'s answer and the commands the server ran for it (INFO's own left out)."""
    before = commands(redis)
    answer = call()
    spent = commands(redis) - before
    spent.pop("info", None)
    return answer, spent
