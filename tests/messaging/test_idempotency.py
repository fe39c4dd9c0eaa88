"""Retries do not duplicate (SPEC 11; issue row 4c): a chat send with an Idempotency-Key that
was stored although its client got an error (here: a timeout while Redis was busy) is found by
the retry with the same key, which answers the first message and stores nothing."""

from __future__ import annotations

import threading

import pytest
from redis import Redis, RedisError
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from config.redis import get_redis
from messaging import keys
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

# Keeps Redis busy (single-threaded) for ARGV[1] ms, as a long script or a slow disk would.
BUSY = """
local started = redis.call('TIME')
local function ms(t) return t[1] * 1000 + math.floor(t[2] / 1000) end
while ms(redis.call('TIME')) - ms(started) < tonumber(ARGV[1]) do end
return 1
"""


def patient_client(key: str) -> Redis:
    """A client of the server (the master, on a cluster) holding `key`, waiting long."""
    client = get_redis()
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        return Redis(host=node.host, port=node.port, socket_timeout=30)
    kwargs = client.connection_pool.connection_kwargs
    return Redis(host=kwargs["host"], port=kwargs["port"], socket_timeout=30)


def answers_at_once(key: str) -> bool:
    """Whether the server holding `key` answers a PING within 100 ms (a new connection)."""
    patient = patient_client(key)
    kwargs = patient.connection_pool.connection_kwargs
    quick = Redis(
        host=kwargs["host"], port=kwargs["port"], socket_timeout=0.1, retry=Retry(NoBackoff(), 0)
    )
    try:
        return bool(quick.ping())
    except RedisError:
        return False
    finally:
        quick.close()
        patient.close()


def cluster_settled() -> None:
    """On a cluster, wait until every node says the cluster is ok again: a master busy longer
    than the node timeout is marked failing by the others (CLUSTERDOWN) until it answers."""
    client = get_redis()
    if not isinstance(client, RedisCluster):
        return
    nodes = [Redis(host=n.host, port=n.port, socket_timeout=2) for n in client.get_nodes()]

    def ok() -> bool:
        try:
            # redis-py answers CLUSTER INFO as a dict of its fields.
            return all(
                node.execute_command("CLUSTER INFO").get("cluster_state") == "ok" for node in nodes
            )
        except RedisError:
            return False

    assert eventually(ok, timeout=20), "the cluster did not come back after the busy master"


@pytest.fixture
def chat(alice, bob, client_for) -> str:
    answer = client_for(alice).post(
        "/api/v1/chats/", {"members": [bob.pk], "message": "Wave 8812 is late"}, format="json"
    )
    assert answer.status_code == 201
    return answer.json()["id"]


def send(api, chat_id: str, body: str, key: str | None = None):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return api.post(f"/api/v1/chats/{chat_id}/messages/", {"body": body}, format="json", **headers)


def bodies(api, chat_id: str) -> list[str]:
    answer = api.get(f"/api/v1/chats/{chat_id}/messages/")
    assert answer.status_code == 200
    return [m["body"] for m in answer.json()["results"]]


def test_a_send_answered_503_but_stored_is_found_by_its_retry(alice, client_for, chat, settings):
    # The throttle's cache shares the plain Redis: without it, the send is the request's only
    # Redis call, so it is the call that times out.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
    api = client_for(alice)
    # Busy longer than the client waits for an answer (REDIS_SOCKET_TIMEOUT), with room for a
    # loaded machine to start the send late (with 0.7 s of room, one run's send came after).
    busy_ms = int(settings.REDIS_SOCKET_TIMEOUT * 1000) + 3000
    busy = threading.Thread(
        target=lambda: patient_client(keys.meta(chat)).eval(BUSY, 1, keys.meta(chat), busy_ms),
        daemon=True,
    )
    busy.start()
    # Send only once the script runs: then a PING on a new connection gets no answer in time.
    assert eventually(lambda: not answers_at_once(keys.meta(chat)), timeout=10)
    first = send(api, chat, "Dock 4 is free", key="send-1")
    busy.join()
    cluster_settled()
    assert first.status_code == 503, first.content
    assert first["Retry-After"]
    # Redis may run the send once it is free (when the send was in its socket before the
    # client gave up; alone on this machine it is): the 503 did not mean "not stored".
    stored = eventually(lambda: len(bodies(api, chat)) == 2, timeout=2)

    retry = send(api, chat, "Dock 4 is free", key="send-1")
    assert retry.status_code == 201
    assert retry.json()["id"] == 2
    if stored:
        assert retry["Idempotent-Replayed"] == "true"
    assert bodies(api, chat) == ["Wave 8812 is late", "Dock 4 is free"]  # once, either way


def test_a_repeat_answers_the_first_answer_and_stores_nothing(alice, bob, client_for, chat):
    api = client_for(alice)
    first = send(api, chat, "Dock 4 is free", key="k-1")
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first
    again = send(api, chat, "Dock 4 is free", key="k-1")
    assert again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert bodies(api, chat) == ["Wave 8812 is late", "Dock 4 is free"]
    # The key is the user's own: another member using the same key sends their own message.
    theirs = send(client_for(bob), chat, "Dock 4 is free", key="k-1")
    assert theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs
    assert theirs.json()["id"] == 3
    # Without a key every send is a new message.
    assert send(api, chat, "Dock 4 is free").json()["id"] == 4


def test_the_same_key_with_another_body_is_422(alice, client_for, chat):
    api = client_for(alice)
    assert send(api, chat, "Dock 4 is free", key="k-2").status_code == 201
    other = send(api, chat, "Dock 5 is free", key="k-2")
    assert other.status_code == 422
    assert "Idempotency-Key" in other.json()["detail"]
    assert bodies(api, chat) == ["Wave 8812 is late", "Dock 4 is free"]


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there", "caf\u00e9"])
def test_a_bad_key_is_400_and_sends_nothing(alice, client_for, chat, key):
    api = client_for(alice)
    answer = send(api, chat, "Dock 4 is free", key=key)
    assert answer.status_code == 400
    assert "Idempotency-Key" in answer.json()
    assert bodies(api, chat) == ["Wave 8812 is late"]


def test_the_record_lives_24_hours_in_the_chats_slot(alice, client_for, chat, redis):
    assert send(client_for(alice), chat, "Dock 4 is free", key="k-3").status_code == 201
    record = keys.idempotency(chat, alice.pk, "k-3")
    assert record.startswith(keys.chat_prefix(chat) + ":idem:")
    assert "k-3" not in record  # only a hash of the client's key
    assert 86_000 < redis.ttl(record) <= 86_400
