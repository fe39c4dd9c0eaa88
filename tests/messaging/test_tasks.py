"""Retention by Celery beat: old messages and idle chats removed, a batch at a time."""

from __future__ import annotations

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings

from config import timestamps
from config.celery import app
from messaging import keys, selectors, services, store, tasks
from tests.waiting import eventually

pytestmark = pytest.mark.django_db

DAY = 24 * 60 * 60


def evalsha_calls(redis) -> int:
    return redis.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)


def test_beat_runs_both_retention_tasks():
    schedule = {
        entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
    assert schedule[tasks.purge_old_chat_messages.name] <= 24 * 3600
    assert schedule[tasks.drop_idle_chats.name] <= 24 * 3600
    assert tasks.purge_old_chat_messages.name in app.tasks
    assert tasks.drop_idle_chats.name in app.tasks


# --- Old messages -------------------------------------------------------------------------------


@pytest.mark.single_redis  # reads one server's command stats
def test_messages_older_than_retention_are_removed_in_batches(
    alice, bob, group, send, clock, stored_ids, settings, redis
):
    settings.CHAT_SWEEP_BATCH = 3
    clock.days_ago(settings.CHAT_MESSAGE_RETENTION_DAYS + 5)
    chat = group(alice, bob)  # bob never reads: only retention removes these
    send(alice, chat, *[f"old {i}" for i in range(2, 11)])
    clock.days_ago(settings.CHAT_MESSAGE_RETENTION_DAYS - 1)
    send(alice, chat, "recent 11", "recent 12")
    clock.days_ago(0)
    redis.config_resetstat()

    result = tasks.purge_old_chat_messages()

    assert result == {"chats": 1, "removed": 10}
    assert stored_ids(chat.id) == [11, 12]
    assert evalsha_calls(redis) >= 4  # 10 messages, at most 3 per call
    assert selectors.chat_get(user=bob, chat_id=chat.id).unread == 2
    assert tasks.purge_old_chat_messages() == {"chats": 0, "removed": 0}


def test_no_script_call_removes_more_than_a_batch(alice, bob, group, send, clock, stored_ids):
    clock.days_ago(100)
    chat = group(alice, bob)
    send(alice, chat, *["old"] * 9)
    assert store.purge_old(chat_ids=[chat.id], cutoff_ms=timestamps.now_ms() + 1, batch=4) == [
        (4, True)
    ]
    assert stored_ids(chat.id) == [5, 6, 7, 8, 9, 10]


def test_a_member_who_never_reads_keeps_messages_until_retention(
    alice, bob, carol, group, send, stored_ids
):
    chat = group(alice, bob, carol)
    send(bob, chat, "one", "two")
    services.messages_fetch_pending(user=alice)
    services.messages_fetch_pending(user=bob)
    retention_ms = settings.CHAT_MESSAGE_RETENTION_DAYS * DAY * 1000

    services.messages_purge_old(at_ms=timestamps.now_ms() + retention_ms - 60_000)
    assert stored_ids(chat.id) == [1, 2, 3]
    assert selectors.chat_get(user=carol, chat_id=chat.id).unread == 3

    services.messages_purge_old(at_ms=timestamps.now_ms() + retention_ms + 60_000)
    assert stored_ids(chat.id) == []
    view = selectors.chat_get(user=carol, chat_id=chat.id)
    assert view.unread == 0
    assert view.last_message is None  # the preview copy is a message too


def test_a_real_worker_runs_the_retention_task(alice, bob, group, send, clock, stored_ids):
    clock.days_ago(settings.CHAT_MESSAGE_RETENTION_DAYS + 1)
    chat = group(alice, bob)
    send(alice, chat, "stale")
    clock.days_ago(0)
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        tasks.purge_old_chat_messages.delay()
        assert eventually(lambda: stored_ids(chat.id) == [])


# --- Idle chats ---------------------------------------------------------------------------------


def test_idle_chats_are_deleted_with_all_their_keys_and_index_entries(
    alice, bob, carol, group, send, clock, chat_keys_in_redis, redis
):
    clock.days_ago(settings.CHAT_IDLE_DAYS + 1)
    idle = group(alice, bob)
    idle_direct = services.chat_open_direct(user=alice, other_id=carol.pk)
    clock.days_ago(settings.CHAT_IDLE_DAYS - 1)
    lively = group(alice, carol)
    clock.days_ago(0)

    assert tasks.drop_idle_chats() == {"dropped": 2}

    for chat in (idle, idle_direct):
        assert chat_keys_in_redis(chat.id) == set()
        assert redis.zscore(keys.activity(), chat.id) is None
    assert chat_keys_in_redis(lively.id)
    assert [c.id for c in selectors.chat_list(user=alice)] == [lively.id]
    for user in (alice, bob, carol):
        ids = {c.decode() for c in redis.zrange(keys.user_chats(user.pk), 0, -1)}
        assert ids <= {lively.id}
    assert tasks.drop_idle_chats() == {"dropped": 0}


def test_sending_keeps_a_chat_alive(alice, bob, group, send, clock, chat_keys_in_redis):
    clock.days_ago(settings.CHAT_IDLE_DAYS + 10)
    chat = group(alice, bob)
    clock.days_ago(1)
    send(bob, chat, "still here")
    clock.days_ago(0)
    assert tasks.drop_idle_chats() == {"dropped": 0}
    assert chat_keys_in_redis(chat.id)


def test_the_chat_itself_decides_not_a_lagging_index(alice, bob, group, send, clock, redis):
    chat = group(alice, bob)
    # As if the index update after a recent send had been lost.
    redis.zadd(keys.activity(), {chat.id: 1000})
    assert tasks.drop_idle_chats() == {"dropped": 0}
    assert selectors.chat_get(user=alice, chat_id=chat.id)
    assert redis.zscore(keys.activity(), chat.id) > 1000  # repaired: not nominated again


def test_index_entries_of_vanished_chats_are_removed(redis):
    redis.zadd(keys.activity(), {"g-00000000000000ab": 1000, "d-1-2": 2000})
    assert tasks.drop_idle_chats() == {"dropped": 0}
    assert redis.zcard(keys.activity()) == 0


def test_idle_chats_are_dropped_a_batch_at_a_time(
    alice, bob, group, clock, settings, redis, monkeypatch
):
    settings.CHAT_SWEEP_BATCH = 3
    clock.days_ago(settings.CHAT_IDLE_DAYS + 1)
    for _ in range(7):
        group(alice, bob)
    clock.days_ago(0)
    nominated: list[int] = []
    original = store.idle_candidates

    def watch(**kwargs):
        found = original(**kwargs)
        nominated.append(len(found))
        return found

    monkeypatch.setattr(store, "idle_candidates", watch)
    assert services.chats_drop_idle() == 7
    assert nominated == [3, 3, 1, 0]
    assert redis.zcard(keys.activity()) == 0
    assert selectors.chat_list(user=alice) == []
