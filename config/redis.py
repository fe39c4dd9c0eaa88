"""The Redis connection the apps use for their data, and the loader for their Lua scripts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django_redis import get_redis_connection
from redis import Redis
from redis.commands.core import Script
from redis.exceptions import RedisClusterException, RedisError

# Every error Redis (or the client talking to it) can raise: unreachable, timeout, out of
# memory, a read-only replica after a failover, a busy script, cluster redirections and
# outages, a script failing on data it did not expect. None of them is the client's fault, and
# each may pass once Redis recovers, so callers treat them all alike: 503 and retry later
# (the API), log and let a sweep or the reconcile repair (background work). redis-py raises some
# cluster errors outside the RedisError family, so they are named too.
REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (RedisError, RedisClusterException)


def get_redis() -> Redis:
    """The shared client of django-redis's pool (timeouts come from settings.CACHES)."""
    return get_redis_connection("default")


class LuaScript:
    """A Lua script kept in a `.lua` file and run with EVALSHA (loaded on first use).

    Every key a script touches is passed in `keys`, so Redis Cluster can route the call.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.source = path.read_text(encoding="utf-8")
        self._script: Script | None = None

    @classmethod
    def beside(cls, module_file: str, name: str) -> LuaScript:
        """Load `lua/<name>.lua` from the folder of the module that owns the script."""
        return cls(Path(module_file).resolve().parent / "lua" / f"{name}.lua")

    def __call__(self, *, keys: Sequence[str], args: Sequence[Any] = (), client: Any = None) -> Any:
        client = client if client is not None else get_redis()
        if self._script is None:
            self._script = get_redis().register_script(self.source)
        return self._script(keys=list(keys), args=list(args), client=client)
