"""The expiry sweep: removes everything that belongs to expired notifications, in small calls."""

import pytest
from celery.contrib.testing.worker import start_worker
from django.core.management import call_command

from config import timestamps
from config.celery import app
from notifications import keys, services
from notifications.selectors import inbox_page
from notifications.tasks import expire_notifications
from subscriptions.models import Subscription
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def key_sizes(redis, warehouse_id: int, subscribers: list[str], readers: list[int]) -> dict:
    return {
        "contents": redis.hlen(keys.contents(warehouse_id)),
        "ids": redis.hlen(keys.ids(warehouse_id)),
        "routes": redis.hlen(keys.routes(warehouse_id)),
        "expiry": redis.zcard(keys.expiry(warehouse_id)),
        "inboxes": sum(redis.zcard(keys.inbox(warehouse_id, s)) for s in subscribers),
        # A user's one-by-one reads ("<user id>:<slot>"), and who has any of a slot ("<slot>").
        "read_marks": sum(
            1
            for f in redis.hkeys(keys.reads(warehouse_id))
            if f.decode().split(":")[0] in {str(u) for u in readers} and b":" in f
        ),
        "readers": sum(1 for f in redis.hkeys(keys.reads(warehouse_id)) if b":" not in f),
    }


def test_sweep_removes_expired_items_and_keeps_live_ones(
    redis, warehouse, rep_notice, role, alice, make_user, send
):
    rita = make_user("rita", role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    short = send(title="short", ttl_seconds=5)
    long = send(title="long", ttl_seconds=3600)
    services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=[short.id, long.id])
    subscribers = [f"u:{alice.pk}", f"r:{role.pk}"]

    report = services.expire_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 10_000)

    assert (report.notifications, report.inbox_entries, report.read_marks) == (1, 2, 1)
    assert key_sizes(redis, warehouse.pk, subscribers, [rita.pk]) == {
        "contents": 1,
        "ids": 1,
        "routes": 1,
        "expiry": 1,
        "inboxes": 2,
        "read_marks": 1,
        "readers": 1,
    }
    assert redis.hexists(keys.ids(warehouse.pk), long.id)
    assert not redis.hexists(keys.ids(warehouse.pk), short.id)

    services.expire_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 7200_000)
    assert set(key_sizes(redis, warehouse.pk, subscribers, [rita.pk]).values()) == {0}


def test_big_fan_outs_are_split_into_bounded_calls(
    settings, redis, warehouse, rep_notice, make_user, send
):
    settings.NOTIFICATION_SWEEP_OPS_PER_CALL = 7
    settings.NOTIFICATION_SWEEP_BATCH = 4
    users = [make_user(f"op{i}") for i in range(10)]
    for user in users:
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=user)
    for i in range(9):
        send(title=str(i), ttl_seconds=1)

    report = services.expire_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 5_000)

    assert (report.notifications, report.inbox_entries) == (9, 90)
    assert report.calls >= 90 // 7
    assert redis.hlen(keys.contents(warehouse.pk)) == 0
    assert all(redis.zcard(keys.inbox(warehouse.pk, f"u:{u.pk}")) == 0 for u in users)


def test_an_interrupted_sweep_is_finished_by_the_next(redis, warehouse, replenishers, send):
    rita, _ = replenishers
    result = send(ttl_seconds=1)
    later = timestamps.now_ms() + 5_000
    from notifications import store

    # Inbox removals sent, but the sweep stopped before the notification itself was finished.
    store.remove_expired(
        warehouse.pk,
        finished=[],
        removals=[(f"r:{rita.groups.first().pk}", str(result.cursor))],
        now_ms=later,
    )
    assert redis.hlen(keys.contents(warehouse.pk)) == 1

    report = services.expire_warehouse(warehouse.pk, at_ms=later)

    assert report.notifications == 1
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


def test_the_command_reports_what_it_removed(warehouse, replenishers, send, monkeypatch, capsys):
    send(ttl_seconds=1)
    send(ttl_seconds=1)
    later = timestamps.now_ms() + 5_000
    monkeypatch.setattr(timestamps, "now_ms", lambda: later)

    call_command("expire_notifications")

    out = capsys.readouterr().out
    assert "SH01: removed 2 expired notifications, 2 inbox entries" in out
    assert "Total:" in out


def test_a_real_worker_runs_the_beat_task(redis, warehouse, replenishers, send, settings):
    rita, _ = replenishers
    result = send(ttl_seconds=1)
    assert settings.CELERY_BEAT_SCHEDULE["expire-notifications"]["schedule"] <= 60

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        # The notification expires one second after publishing; the worker's own clock decides.
        assert eventually(lambda: timestamps.now_ms() > result.created_at_ms + 1000, timeout=5)
        expire_notifications.delay()
        assert eventually(lambda: redis.hlen(keys.contents(warehouse.pk)) == 0)

    assert inbox_page(user=rita, warehouse_id=warehouse.pk, since=0).items == []
