"""The Redis layer: concurrent senders, bounded round trips, and how the scripts use keys."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

import messaging
from config import timestamps
from messaging import keys, selectors, services, store

pytestmark = pytest.mark.django_db

LUA_DIR = Path(messaging.__file__).parent / "lua"
SENDERS, PER_SENDER = 8, 500


def test_concurrent_senders_get_unique_gapless_ids(make_user, group, redis, stored_ids):
    senders = [make_user(f"sender{i}") for i in range(SENDERS)]
    never_reads = make_user("never_reads")  # keeps every message from the seen-by-all cleanup
    chat = group(senders[0], *senders[1:], never_reads, message="first")
    start = threading.Barrier(SENDERS)
    got: dict[int, list[int]] = {}
    errors: list[BaseException] = []

    def send(n: int, i: int) -> int:
        sent = store.send(
            chat_id=chat.id, sender_id=senders[n].pk, body=f"{n}:{i}", now_ms=timestamps.now_ms()
        )
        assert sent is not None  # every sender is a member
        return sent[0].id

    def run(n: int) -> None:
        try:
            start.wait()
            got[n] = [send(n, i) for i in range(PER_SENDER)]
        except BaseException as exc:  # reported below; a thread cannot fail the test itself
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(SENDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []

    # The first message is id 1; the 4000 concurrent ones are exactly 2..4001.
    total = SENDERS * PER_SENDER
    assert sorted(i for ids in got.values() for i in ids) == list(range(2, total + 2))
    assert stored_ids(chat.id) == list(range(1, total + 2))
    bodies = [
        store._message(chat.id, raw).body for raw in redis.zrange(keys.messages(chat.id), 1, -1)
    ]
    assert sorted(bodies) == sorted(f"{n}:{i}" for n in range(SENDERS) for i in range(PER_SENDER))
    for n, ids in got.items():  # each sender's messages in the order it sent them
        assert ids == sorted(ids)
        by_id = dict(zip(ids, range(PER_SENDER), strict=True))
        assert all(bodies[i - 2] == f"{n}:{by_id[i]}" for i in ids)
    assert int(redis.get(keys.sequence(chat.id))) == total + 1


def evalsha_calls(redis) -> int:
    stats = redis.info("commandstats")
    return stats.get("cmdstat_evalsha", {}).get("calls", 0)


@pytest.mark.parametrize(("chats", "per_chat"), [(1, 1), (25, 8)])
def test_pending_fetch_costs_a_fixed_number_of_round_trips(
    alice, bob, group, send, redis, round_trips, chats, per_chat
):
    for _ in range(chats):
        chat = group(alice, bob)
        send(alice, chat, *["x"] * (per_chat - 1))
    services.messages_fetch_pending(user=alice)  # loads the script: not what is measured
    redis.config_resetstat()
    round_trips["n"] = 0

    pending = services.messages_fetch_pending(user=bob)

    assert sum(len(p.messages) for p in pending) == chats * per_chat
    # Read the chat list, then run every chat's script in one pipeline (EVALSHA directly, no
    # SCRIPT EXISTS first): the same two however many chats and messages.
    assert round_trips["n"] == 2
    assert evalsha_calls(redis) == chats


def test_chat_list_costs_a_fixed_number_of_round_trips(alice, bob, group, redis, round_trips):
    for _ in range(20):
        group(alice, bob)
    selectors.chat_list(user=bob)  # loads the script: not what is measured
    round_trips["n"] = 0
    assert len(selectors.chat_list(user=bob)) == 20
    assert round_trips["n"] == 2


@pytest.mark.single_redis  # reads one server's command stats
def test_scripts_are_registered_once_and_run_by_sha(alice, bob, group, redis):
    group(alice, bob)
    redis.config_resetstat()
    group(alice, bob)
    stats = redis.info("commandstats")
    assert "cmdstat_eval" not in stats
    assert stats["cmdstat_evalsha"]["calls"] >= 1


def test_a_fetch_with_nothing_new_queries_no_database(alice, bob, group, send, round_trips):
    for _ in range(3):
        group(alice, bob)
    services.messages_fetch_pending(user=bob)  # what was there: now seen
    round_trips["n"] = 0

    with CaptureQueriesContext(connection) as queries:
        assert services.messages_fetch_pending(user=bob) == []

    assert len(queries) == 0  # no senders to name
    assert round_trips["n"] == 1  # the chat list and last ids (tests/messaging/test_fetch_held.py)
