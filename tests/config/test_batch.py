"""config.redis.Batch and LuaScript: many single-slot calls together, on one Redis and on the
cluster (the `--redis-cluster` pass), whatever the script cache and slot map say."""

from __future__ import annotations

import pytest
from redis.cluster import RedisCluster
from redis.exceptions import ResponseError

from config.redis import Batch, LuaScript

set_and_echo = LuaScript.beside(__file__, "set_and_echo")

# Hash tags spread over the 16384 slots, so on the cluster every master gets some.
KEYS = [f"wms:{{t:{n}}}:k" for n in range(30)]


def on_cluster(redis) -> bool:
    return isinstance(redis, RedisCluster)


def evalsha_calls(redis) -> int:
    if on_cluster(redis):
        stats = redis.info("commandstats", target_nodes=RedisCluster.PRIMARIES)
        return sum(node.get("cmdstat_evalsha", {}).get("calls", 0) for node in stats.values())
    return redis.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)


def test_replies_come_back_in_the_order_of_the_calls_whatever_their_slots(redis):
    batch = Batch()
    for n, key in enumerate(KEYS):
        if n % 3 == 2:
            batch.command("ZADD", key + ":z", "GT", n, "m")
        else:
            batch.script(set_and_echo, keys=[key], args=[n])
    assert len(batch) == len(KEYS)

    replies = batch.execute()

    for n, (key, reply) in enumerate(zip(KEYS, replies, strict=True)):
        if n % 3 == 2:
            assert reply == 1
            assert redis.zscore(key + ":z", "m") == n
        else:
            assert reply == [key.encode(), str(n).encode()]
            assert redis.get(key) == str(n).encode()


def test_an_empty_batch_sends_nothing():
    assert Batch().execute() == []


def test_each_script_call_is_one_evalsha_on_the_master_of_its_slot(redis):
    set_and_echo(keys=[KEYS[0]], args=["x"])  # loaded now: only the batch is counted below
    if on_cluster(redis):
        redis.config_resetstat(target_nodes=RedisCluster.PRIMARIES)
    else:
        redis.config_resetstat()
    batch = Batch()
    for key in KEYS:
        batch.script(set_and_echo, keys=[key], args=["x"])
    batch.execute()
    assert evalsha_calls(redis) == len(KEYS)
    if on_cluster(redis):
        masters = {redis.get_node_from_key(key).name for key in KEYS}
        assert len(masters) == len(redis.get_primaries())  # the calls spanned every master


def test_scripts_flushed_from_every_server_are_loaded_again(redis):
    set_and_echo(keys=[KEYS[0]], args=["before"])
    redis.script_flush()  # on the cluster: every master

    batch = Batch()
    for key in KEYS:
        batch.script(set_and_echo, keys=[key], args=["after"])
    assert [reply[1] for reply in batch.execute()] == [b"after"] * len(KEYS)

    redis.script_flush()  # on the cluster: every master
    assert set_and_echo(keys=[KEYS[1]], args=["alone"]) == [KEYS[1].encode(), b"alone"]


def test_the_first_error_is_raised_after_the_other_calls_ran(redis):
    redis.set(KEYS[1] + ":z", "not a sorted set")
    batch = Batch()
    batch.script(set_and_echo, keys=[KEYS[0]], args=["ran"])
    batch.command("ZADD", KEYS[1] + ":z", 1, "m")
    batch.script(set_and_echo, keys=[KEYS[2]], args=["ran"])
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        batch.execute()
    assert redis.get(KEYS[0]) == redis.get(KEYS[2]) == b"ran"


def test_a_batch_follows_a_slot_that_moved_to_another_master(redis):
    if not on_cluster(redis):
        pytest.skip("Redis Cluster only (the --redis-cluster pass)")
    key = KEYS[0]
    slot = redis.keyslot(key)
    source = redis.get_node_from_key(key)
    target = next(node for node in redis.get_primaries() if node.name != source.name)

    def move_slot(to) -> None:
        owner_id = redis.get_redis_connection(to).execute_command("CLUSTER MYID")
        for node in [to, *(n for n in redis.get_primaries() if n.name != to.name)]:
            redis.get_redis_connection(node).execute_command(
                "CLUSTER SETSLOT", slot, "NODE", owner_id
            )

    move_slot(target)  # the client's slot map still names the source
    try:
        batch = Batch()
        batch.script(set_and_echo, keys=[key], args=["moved"])
        batch.script(set_and_echo, keys=[KEYS[1]], args=["stayed"])
        assert batch.execute() == [[key.encode(), b"moved"], [KEYS[1].encode(), b"stayed"]]
        assert redis.get_redis_connection(target).get(key) == b"moved"
    finally:
        redis.get_redis_connection(target).delete(key)
        move_slot(source)
        redis.nodes_manager.initialize()


def test_a_script_the_server_does_not_know_is_loaded_and_sent_again(redis, round_trips):
    """No SCRIPT EXISTS before every pipeline: EVALSHA, and on NOSCRIPT load and resend."""
    first = Batch()
    first.script(set_and_echo, keys=["wms:{t}:a"], args=["w"])
    assert first.execute() == [[b"wms:{t}:a", b"w"]]
    redis.script_flush()  # e.g. a restarted server
    batch = Batch()
    batch.script(set_and_echo, keys=["wms:{t}:a"], args=["x"])
    assert batch.execute() == [[b"wms:{t}:a", b"x"]]
    round_trips["n"] = 0
    again = Batch()
    again.script(set_and_echo, keys=["wms:{t}:a"], args=["y"])
    assert again.execute() == [[b"wms:{t}:a", b"y"]]
    assert round_trips["n"] == 1
