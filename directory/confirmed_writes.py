"""Writes made from the directory this process holds, its version confirmed by the write itself.

A publish outside a request (a rule, a task, a shift handover) read the directory's version
in a round trip of its own, to know that the message type and the warehouse it resolved were
still current, before its script. `optimistically` runs such work on the version this process
already holds (directory.cache.optimistic); the script then checks that version as its first
step (lua/version_check.lua) and writes nothing when it has moved on, and the work runs again
from a fresh directory. Unlike a poll (directory/optimistic.py), a write cannot be confirmed
after the fact: its fan-out is done. So the check sits inside the one call that writes.

On Redis Cluster the version lives on another master than a warehouse's keys, so the script
cannot read it: there `optimistic()` changes nothing, the version is read first as before, and
the script is given nothing to confirm.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from redis.exceptions import RedisError

from . import cache
from .keys import version_key

# The script's reply when the version moved on (lua/version_check.lua): nothing was written.
MOVED = -2

T = TypeVar("T")
P = ParamSpec("P")


def check(same_slot_key: str) -> tuple[str, str]:
    """The script's last KEY and ARGV: the version key and the version to confirm, or a key
    of the script's own slot and "" when the request has nothing unconfirmed."""
    held = cache.unconfirmed_version()
    return (same_slot_key, "") if held is None else (version_key(), held)


def settle(reply_status: int) -> None:
    """After the script: DirectoryChanged when it found the version moved on (it wrote
    nothing), else the held version stands for the rest of the work."""
    cache.settle_unconfirmed(moved=reply_status == MOVED)


def optimistically(work: Callable[[], T]) -> T:
    """`work()` on the directory this process holds, when not within a request (which has
    read the version already); run again the usual way when what it held had moved on.

    `work` must write only through scripts guarded here, and settle each reply. An exception
    it raises from what it held (an inactive warehouse, an unknown type) is confirmed before
    it leaves, as a poll's 404 is; a Redis error is not retried: a script that timed out may
    have written.
    """
    if cache.within_request():
        return work()
    try:
        with cache.request_scope(), cache.optimistic():
            try:
                return work()
            except (cache.DirectoryChanged, RedisError):
                raise
            except Exception:
                cache.confirm_pending()  # DirectoryChanged if the refusal came from the past
                raise
    except cache.DirectoryChanged:
        with cache.request_scope():
            return work()


def from_held_directory(function: Callable[P, T]) -> Callable[P, T]:
    """Decorator: every call of `function` runs `optimistically`."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return optimistically(lambda: function(*args, **kwargs))

    return run
