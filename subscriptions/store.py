"""The only code that reads and writes the subscription mirror in Redis."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from config.redis import get_redis

from . import keys


class Pair(NamedTuple):
    """A (warehouse, message type) pair: one subscriber set in Redis."""

    warehouse_id: int
    message_type_id: int


def replace_subscribers(desired: Mapping[Pair, set[str]]) -> None:
    """Make each pair's set exactly `desired[pair]` (empty means: no key).

    One MULTI/EXEC per warehouse: readers never see a half-built set, and every key of one
    transaction shares the warehouse's hash slot.
    """
    by_warehouse: dict[int, list[Pair]] = defaultdict(list)
    for pair in desired:
        by_warehouse[pair.warehouse_id].append(pair)
    client = get_redis()
    for warehouse_id, pairs in by_warehouse.items():
        pipe = client.pipeline(transaction=True)
        for pair in pairs:
            set_key = keys.subscribers(warehouse_id, pair.message_type_id)
            token_key = keys.subscribers_token(warehouse_id, pair.message_type_id)
            members = desired[pair]
            pipe.delete(set_key)
            if members:
                pipe.sadd(set_key, *sorted(members))
                pipe.set(token_key, uuid.uuid4().hex)
            else:
                pipe.delete(token_key)
        pipe.execute()


def read_subscribers(pairs: Iterable[Pair]) -> dict[Pair, set[str]]:
    """Current members of each pair's set, in one pipelined round trip."""
    pairs = list(pairs)
    pipe = get_redis().pipeline(transaction=False)
    for pair in pairs:
        pipe.smembers(keys.subscribers(*pair))
    return {
        pair: {m.decode() for m in members}
        for pair, members in zip(pairs, pipe.execute(), strict=True)
    }
