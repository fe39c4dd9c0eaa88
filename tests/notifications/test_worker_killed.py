"""Chaos: the Celery worker is killed in the middle of the expiry sweep and restarted; the next
sweep finishes the job, and nothing live is lost."""

from __future__ import annotations

import time

import pytest

from config import timestamps
from notifications import keys, store
from notifications.selectors import inbox_page
from notifications.tasks import expire_notifications
from subscriptions.models import Subscription
from tests.waiting import eventually
from tests.workers import kill, worker_process

pytestmark = pytest.mark.django_db(transaction=True)

HALFWAY = "chaos:halfway"


def stop_after_two_sweep_calls() -> None:
    """In the worker: the third removal call signals the test and hangs until killed."""
    real = store.remove_expired
    calls: list[int] = []

    def remove_then_hang(*args, **kwargs):
        if len(calls) == 2:
            store.get_redis().set(HALFWAY, "1")
            time.sleep(60)
        calls.append(1)
        return real(*args, **kwargs)

    store.remove_expired = remove_then_hang


def test_a_sweep_killed_half_way_is_finished_by_the_next_and_loses_nothing_live(
    redis, settings, monkeypatch, warehouse, rep_notice, role, make_user, send
):
    rita, alice = make_user("rita", role), make_user("alice")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    now = timestamps.now_ms()
    monkeypatch.setattr(timestamps, "now_ms", lambda: now - 7_200_000)  # two hours ago
    expired = {send(title=f"old {i}", ttl_seconds=3600).cursor for i in range(12)}
    monkeypatch.undo()
    live = [send(title=f"live {i}").id for i in range(3)]
    settings.NOTIFICATION_SWEEP_BATCH = 2
    settings.NOTIFICATION_SWEEP_OPS_PER_CALL = 2

    with worker_process(prepare=stop_after_two_sweep_calls) as worker:
        expire_notifications.delay()
        assert eventually(lambda: redis.exists(HALFWAY), timeout=20)
        kill(worker)
    left = {int(c) for c in redis.zrangebyscore(keys.expiry(warehouse.pk), "-inf", now)}
    assert 0 < len(left) < len(expired)  # really killed half-way

    with worker_process():
        expire_notifications.delay()  # beat's next tick
        assert eventually(
            lambda: redis.zcount(keys.expiry(warehouse.pk), "-inf", now) == 0, timeout=20
        )

    assert redis.hlen(keys.contents(warehouse.pk)) == len(live)
    assert redis.hlen(keys.routes(warehouse.pk)) == len(live)
    for subscriber in (f"r:{role.pk}", f"u:{alice.pk}"):
        cursors = {int(c) for c in redis.zrange(keys.inbox(warehouse.pk, subscriber), 0, -1)}
        assert len(cursors) == len(live)
        assert not cursors & expired
    for user in (rita, alice):
        page = inbox_page(user=user, warehouse_id=warehouse.pk)
        assert [item.notification.id for item in page.items] == live
