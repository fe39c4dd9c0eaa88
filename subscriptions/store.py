"""The only code that reads and writes the subscription mirror in Redis."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import NamedTuple

from config.redis import Batch, LuaScript, as_text, get_redis

from . import keys

_write_subscribers = LuaScript.beside(__file__, "write_subscribers")


class Pair(NamedTuple):
    """A (warehouse, message type) pair: one subscriber set in Redis."""

    warehouse_id: int
    message_type_id: int


class Outcome(IntEnum):
    """What became of one pair's write (see lua/write_subscribers.lua)."""

    WRITTEN = 1
    SUPERSEDED = 0  # a writer that read the database later will write it
    LOST = -1  # the version counter vanished (Redis emptied meanwhile): take a new version


class Mirrored(NamedTuple):
    """A pair as Redis holds it: its members and its token (None: not mirrored)."""

    members: set[str]
    token: str | None

    @property
    def whole(self) -> bool:
        """Mirrored, and holding as many members as its last write put there."""
        return self.token is not None and token_count(self.token) == len(self.members)


def new_token(count: int) -> str:
    return f"{count}:{uuid.uuid4().hex}"


def token_count(token: str) -> int | None:
    """The member count a token was written with (None for tokens written before counts)."""
    count, sep, _ = token.partition(":")
    return int(count) if sep and count.isdigit() else None


def take_versions(pairs: Iterable[Pair]) -> dict[Pair, int]:
    """Take the next version of each pair: call it BEFORE reading the database for them."""
    pairs = list(pairs)
    if not pairs:
        return {}
    batch = Batch()
    for pair in pairs:
        batch.command("INCR", keys.subscribers_version(*pair))
    return {pair: int(v) for pair, v in zip(pairs, batch.execute(), strict=True)}


def replace_subscribers(
    desired: Mapping[Pair, set[str]], versions: Mapping[Pair, int]
) -> dict[Pair, Outcome]:
    """Make each pair's set exactly `desired[pair]`, unless a later version is on its way.

    One script call per warehouse (its keys share one hash slot), all in one round trip (one per
    master on a cluster):
    readers never see a half-built set, and an empty set still gets its token.
    """
    by_warehouse: dict[int, list[Pair]] = defaultdict(list)
    for pair in desired:
        by_warehouse[pair.warehouse_id].append(pair)
    if not by_warehouse:
        return {}
    batch = Batch()
    for warehouse_id, pairs in by_warehouse.items():
        script_keys: list[str] = []
        args: list[object] = []
        for pair in pairs:
            members = sorted(desired[pair])
            script_keys += [
                keys.subscribers(warehouse_id, pair.message_type_id),
                keys.subscribers_token(warehouse_id, pair.message_type_id),
                keys.subscribers_version(warehouse_id, pair.message_type_id),
            ]
            args += [versions[pair], new_token(len(members)), len(members), *members]
        batch.script(_write_subscribers, keys=script_keys, args=args)
    outcomes: dict[Pair, Outcome] = {}
    for pairs, reply in zip(by_warehouse.values(), batch.execute(), strict=True):
        outcomes.update(zip(pairs, (Outcome(int(o)) for o in reply), strict=True))
    return outcomes


def forget_pairs(pairs: Iterable[Pair]) -> None:
    """Remove the set, token and version of each pair (one warehouse's keys share a slot)."""
    batch = Batch()
    for pair in pairs:
        batch.command(
            "UNLINK",
            keys.subscribers(*pair),
            keys.subscribers_token(*pair),
            keys.subscribers_version(*pair),
        )
    batch.execute()


def read_mirror(pairs: Iterable[Pair]) -> dict[Pair, Mirrored]:
    """Each pair's members and token as Redis holds them, in one pipelined round trip."""
    pairs = list(pairs)
    batch = Batch()
    for pair in pairs:
        batch.command("SMEMBERS", keys.subscribers(*pair))
        batch.command("GET", keys.subscribers_token(*pair))
    replies = batch.execute()
    return {
        pair: Mirrored(
            members={m.decode() for m in replies[2 * i]},
            token=None if replies[2 * i + 1] is None else replies[2 * i + 1].decode(),
        )
        for i, pair in enumerate(pairs)
    }


def read_subscribers(pairs: Iterable[Pair]) -> dict[Pair, set[str]]:
    """Current members of each pair's set, in one pipelined round trip."""
    return {pair: mirrored.members for pair, mirrored in read_mirror(pairs).items()}


def mark_rebuilding(what: str | None, *, seconds: int = 0) -> None:
    """Set (what is being rebuilt, for `seconds`) or clear (None) the rebuild mark."""
    client = get_redis()
    if what is None:
        client.delete(keys.mirror_rebuilding())
    else:
        client.set(keys.mirror_rebuilding(), what, ex=seconds)


def rebuilding() -> str | None:
    """What some process is rebuilding now, if anything (the mark's text)."""
    value = get_redis().get(keys.mirror_rebuilding())
    return None if value is None else as_text(value)
