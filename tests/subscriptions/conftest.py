"""Helpers for reading the subscription mirror straight from Redis."""

import pytest

from subscriptions import keys


@pytest.fixture
def members(redis):
    """Members of a (warehouse, message type) subscriber set, as a Python set of str."""

    def read(warehouse, message_type) -> set[str]:
        # Objects or ids: a deleted object has lost its pk.
        warehouse_id = getattr(warehouse, "pk", warehouse)
        type_id = getattr(message_type, "pk", message_type)
        raw = redis.smembers(keys.subscribers(warehouse_id, type_id))
        return {m.decode() for m in raw}

    return read
