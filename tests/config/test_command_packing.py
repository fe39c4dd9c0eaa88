"""The product's Redis connections pack commands with hiredis in one call
(config/redis_connections.py _Packer): the same bytes, and the same DataError, as redis-py's
own packing, whatever the arguments."""

from __future__ import annotations

import pytest
from redis import Redis
from redis.connection import HiredisRespSerializer
from redis.exceptions import DataError

from config.redis import get_redis
from config.redis_connections import _Packer

CASES = [
    ("EVALSHA", "0" * 40, 3, "wms:{wh:1}:seq", b"raw", 1.5, 10**20, -7, ""),
    ("SCRIPT LOAD", "return 1"),  # a name of two words
    (b"SCRIPT LOAD", b"return 1"),
    (b"GET", "k"),
    ("SET", bytearray(b"a"), memoryview(b"bc")),  # buffers redis-py makes bytes of
    ("JSON.SET", "k", "$", "1"),  # a name that is not only letters
    ("ZADD", "k\u00e9", 1, "\u00e9"),
    ("SET", "k", None),  # refused: DataError
    ("SET", "k", True),
    ("SET", "k", object()),
]


def packed(packer: HiredisRespSerializer, args: tuple) -> object:
    try:
        return packer.pack(*args)
    except DataError as exc:
        return ("DataError", str(exc))


@pytest.mark.parametrize("args", CASES, ids=range(len(CASES)))
def test_packing_matches_redis_py(args):
    assert packed(_Packer(), args) == packed(HiredisRespSerializer(), args)


@pytest.mark.single_redis
def test_the_product_client_packs_with_it(redis):
    client = get_redis()
    assert isinstance(client, Redis)
    connection = client.connection_pool.get_connection()
    try:
        assert isinstance(connection._command_packer, _Packer)
    finally:
        client.connection_pool.release(connection)
    client.set("packing:k", memoryview(b"value"))
    assert client.get("packing:k") == b"value"
    with pytest.raises(DataError):
        client.execute_command("SET", "packing:k", None)
