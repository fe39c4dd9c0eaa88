"""Writes made from the directory this process holds, its version confirmed by the write itself.

A publish outside a request (a rule, a task, a shift handover) read the directory's version
in a round trip of its own, to know that the message type and the warehouse it resolved were
still current, before its script. `writing()` runs such a write on the version this process
already holds (an unconfirmed directory.snapshot.Snapshot); the script then checks that
version as its first step (lua/version_check.lua) and writes nothing when it has moved on.
Unlike a poll, a write cannot be confirmed after the fact: its fan-out is done. So the check
sits inside the one call that writes.

There is no retry here: the write's own loop (notifications/publishing.py) decides what a
moved directory costs it. Outside a request the write owns its scope and `refresh`es it (what
follows reads the directory afresh, confirmed); within a request the request read more than
the write from the directory, so `refresh` raises DirectoryChanged and the request answers
again by its own rule (directory/held.py).

On Redis Cluster the version lives on another master than a warehouse's keys, so the script
cannot read it: there `holding()` changes nothing, the version is read first as before, and
the script is given nothing to confirm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from redis.exceptions import RedisError

from config.lua_compose import Prelude, passed_value, register

from . import cache
from .keys import version_key

# The script's reply when the version moved on (lua/version_check.lua): nothing was written.
MOVED = -2

T = TypeVar("T")


def _take_version(script: str, passed: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """The version key and the version to confirm, passed as `version=` (`check` below)."""
    key, held = passed_value(script, passed, "version", "the directory's version")
    return [key], [held]


# The prelude a confirmed write's script takes: it takes off the script's last KEY and ARGV.
PRELUDE = register(Prelude.beside(__file__, "version_check", keys=1, args=1, take=_take_version))


def check(same_slot_key: str) -> tuple[str, str]:
    """The script's last KEY and ARGV: the version key and the version to confirm, or a key
    of the script's own slot and "" when the request's snapshot is confirmed already."""
    held = cache.snapshot()
    if held is None or held.confirmed:
        return same_slot_key, ""
    return version_key(), held.version


@dataclass(frozen=True)
class Write:
    """One write's use of the directory. `owned`: the write opened the request's scope itself
    (it runs outside a request), so it may refresh the directory and go on."""

    owned: bool

    def confirmed(self, work: Callable[[], T]) -> T | None:
        """`work()`, which resolves what the write names from the directory. When the write
        owns its scope, an exception it raises from what the process held (an inactive
        warehouse, an unknown type) is confirmed before it leaves, as a poll's 404 is; None
        when that directory had moved on (`refresh`, then run it again). A Redis error is
        not confirmed."""
        if not self.owned:
            return work()
        try:
            return work()
        except (cache.DirectoryChanged, RedisError):
            raise
        except Exception:
            try:
                cache.confirm_pending()
            except cache.DirectoryChanged:
                return None
            raise

    def settle(self) -> None:
        """The script found the version current (or wrote nothing that depends on it): the
        request's snapshot stands confirmed for the rest of the work."""
        cache.settle(cache.snapshot(), moved=False)

    def refresh(self) -> None:
        """The script found the version moved on (it wrote nothing): what follows reads the
        directory afresh. Within a request, DirectoryChanged: the request answers again."""
        if not self.owned:
            cache.settle(cache.snapshot(), moved=True)
        cache.read_afresh()


@contextmanager
def writing() -> Iterator[Write]:
    """The write's place in the directory: within a request, the request's own; outside one,
    a request's scope of its own that starts from the version this process holds."""
    if cache.within_request():
        yield Write(owned=False)
        return
    with cache.request_scope(), cache.holding():
        yield Write(owned=True)
