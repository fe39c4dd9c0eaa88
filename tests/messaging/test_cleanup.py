"""Nothing left behind: deleted users' chat data, stray chat keys, lost index entries (9.4)."""

from __future__ import annotations

import logging

import pytest
from django.conf import settings

from config.celery import app
from messaging import cleanup, keys, selectors, services, tasks

pytestmark = pytest.mark.django_db


def user_keys(redis, user_id: int) -> set[str]:
    return {k.decode() for k in redis.scan_iter(match=f"wms:\\{{user:{user_id}\\}}:*")}


def member_names(user, chat_id: str) -> list[str]:
    return [m.username for m in selectors.chat_get(user=user, chat_id=chat_id).members]


def test_deleting_a_user_takes_them_out_of_every_chat_after_commit(
    alice,
    bob,
    carol,
    group,
    send,
    redis,
    chat_keys_in_redis,
    celery_eager,
    django_capture_on_commit_callbacks,
):
    bob_id = bob.pk
    shared = group(alice, bob, carol)
    alone = group(bob, alice)
    services.chat_leave(user=alice, chat_id=alone.id)  # bob is its last member
    direct = services.chat_open_direct(user=alice, other_id=bob.pk)
    send(bob, direct, "one", "two")
    assert user_keys(redis, bob_id) == {keys.user_chats(bob_id), keys.contacts(bob_id)}

    with django_capture_on_commit_callbacks(execute=True):
        bob.delete()

    assert user_keys(redis, bob_id) == set()
    assert member_names(alice, shared.id) == ["alice", "carol"]
    assert chat_keys_in_redis(alone.id) == set()  # the last member out deleted it
    assert redis.zscore(keys.activity(), alone.id) is None
    assert member_names(alice, direct.id) == ["alice"]
    # Alice leaving the direct chat ends it; with bob deleted its sequence has no future.
    services.chat_leave(user=alice, chat_id=direct.id)
    assert chat_keys_in_redis(direct.id) == {keys.sequence(direct.id)}
    assert cleanup.sweep_orphans().keys == 1
    assert chat_keys_in_redis(direct.id) == set()


def test_a_failed_queueing_does_not_undo_the_delete(
    alice, bob, group, redis, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    bob_id = bob.pk
    group(alice, bob)

    def broker_down(*args):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(tasks.forget_deleted_user, "delay", broker_down)
    with caplog.at_level(logging.WARNING), django_capture_on_commit_callbacks(execute=True):
        bob.delete()
    assert "left to the periodic sweep" in caplog.text
    assert not type(bob).objects.filter(pk=bob_id).exists()
    # The sweep does what the task would have done.
    assert cleanup.sweep_orphans().memberships == 1
    assert user_keys(redis, bob_id) == set()


def test_the_sweep_finds_memberships_of_deleted_users_missing_from_their_list(
    alice, bob, carol, group, redis
):
    bob_id = bob.pk
    chat = group(alice, bob, carol)
    solo = group(bob, carol)
    services.chat_leave(user=carol, chat_id=solo.id)
    redis.delete(keys.user_chats(bob.pk))  # the index lost him, the chats did not
    type(bob).objects.filter(
        pk=bob_id
    ).delete()  # its after-commit task never runs here: only the sweep

    report = cleanup.sweep_orphans(batch=2)

    assert (report.memberships, report.chats_deleted) == (2, 1)
    assert member_names(alice, chat.id) == ["alice", "carol"]
    assert [c.id for c in selectors.chat_list(user=carol)] == [chat.id]
    assert user_keys(redis, bob_id) == set()
    assert cleanup.sweep_orphans() == cleanup.OrphanReport(chats=1)  # nothing left to do


def test_the_sweep_restores_lost_index_entries(alice, bob, carol, group, redis):
    chat = group(alice, bob, carol)
    other = services.chat_open_direct(user=alice, other_id=bob.pk)
    for user in (alice, bob, carol):
        redis.delete(keys.user_chats(user.pk))
    redis.delete(keys.activity())
    assert selectors.chat_list(user=carol) == []

    report = cleanup.sweep_orphans()

    assert report.restored == 3 + 2 + 2  # members' entries and one activity entry per chat
    assert [c.id for c in selectors.chat_list(user=carol)] == [chat.id]
    assert {c.id for c in selectors.chat_list(user=bob)} == {chat.id, other.id}
    assert {c.decode() for c in redis.zrange(keys.activity(), 0, -1)} == {chat.id, other.id}
    assert cleanup.sweep_orphans().restored == 0


def test_the_sweep_removes_stray_keys_of_gone_chats_but_keeps_a_pairs_sequence(
    alice, bob, redis, chat_keys_in_redis
):
    stray = "g-00000000000000aa"
    redis.zadd(keys.members(stray), {"5": 0})
    redis.zadd(keys.messages(stray), {'{"id": 1}': 1})
    redis.set(keys.sequence(stray), 1)
    ended = keys.direct_chat_id(alice.pk, bob.pk)
    redis.set(keys.sequence(ended), 7)
    redis.hset(keys.joined(ended), str(alice.pk), 7)
    deleted_pair = keys.direct_chat_id(alice.pk, 999_999)
    redis.set(keys.sequence(deleted_pair), 3)

    report = cleanup.sweep_orphans()

    assert report.keys == 3 + 1 + 1
    assert chat_keys_in_redis(stray) == set()
    assert chat_keys_in_redis(ended) == {keys.sequence(ended)}
    assert chat_keys_in_redis(deleted_pair) == set()


def test_the_sweep_forgets_deleted_users_that_only_have_contacts(alice, bob, redis):
    bob_id = bob.pk
    services.chat_open_direct(user=alice, other_id=bob.pk)
    services.chat_leave(user=bob, chat_id=keys.direct_chat_id(alice.pk, bob.pk))
    type(bob).objects.filter(pk=bob_id).delete()
    redis.rpush(keys.contacts(bob.pk), alice.pk)  # his contacts are all that is left of him

    assert cleanup.sweep_orphans().users == 1
    assert user_keys(redis, bob_id) == set()
    assert user_keys(redis, alice.pk)  # alice exists: hers stay


def test_beat_runs_the_chat_orphan_sweep(alice, bob, group, redis, celery_eager):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-chat-orphans"]
    assert entry["task"] == tasks.sweep_chat_orphans.name in app.tasks
    assert entry["schedule"] <= 24 * 3600
    chat = group(alice, bob)
    redis.delete(keys.user_chats(bob.pk))
    result = tasks.sweep_chat_orphans.delay().get()
    assert result["restored"] == 1
    assert [c.id for c in selectors.chat_list(user=bob)] == [chat.id]
