"""Chaos: the Celery worker is killed in the middle of a rules run and restarted. Every alert
goes out, and none twice: what was published before the kill is already confirmed."""

from __future__ import annotations

import time

import pytest

from config import timestamps
from rules import alerts, store
from rules.tasks import run_due_rules
from tests.waiting import eventually
from tests.workers import kill, worker_process

from .conftest import alert

pytestmark = pytest.mark.django_db(transaction=True)

HALFWAY = "chaos:halfway"
KEYS = [f"A-01-0{i}" for i in range(1, 6)]


def stop_after_two_publishes() -> None:
    """In the worker: the third publish signals the test and hangs until killed."""
    real = alerts.publish
    published: list[str] = []

    def publish_then_hang(**kwargs):
        if len(published) == 2:
            store.get_redis().set(HALFWAY, "1")
            time.sleep(60)
        published.append(kwargs["title"])
        return real(**kwargs)

    alerts.publish = publish_then_hang


def test_a_rules_run_killed_half_way_sends_the_rest_once_and_nothing_twice(
    redis, settings, make_rule, rita, warehouse, inbox
):
    settings.RULES_LOCK_SECONDS = 1  # how long a dead run keeps its rule and claims
    make_rule(alerts=[alert(warehouse, key) for key in KEYS])

    with worker_process(prepare=stop_after_two_publishes) as worker:
        run_due_rules.delay()
        assert eventually(lambda: redis.exists(HALFWAY), timeout=20)
        kill(worker)
    assert sorted(i["title"] for i in inbox(rita, warehouse)) == [
        f"Replenish {key}" for key in KEYS[:2]
    ]

    # The dead run's lock and its claims on the unsent alerts lapse.
    def lapsed() -> bool:
        marks = store.marks("py:shortages", warehouse.pk, KEYS)
        pending = [mark for mark in marks.values() if mark < 0]
        return not redis.exists("wms:rules:py:shortages:lock") and all(
            timestamps.now_ms() + mark >= 1000 for mark in pending
        )

    assert eventually(lapsed, timeout=10)
    with worker_process():
        run_due_rules.delay()  # beat's next tick
        assert eventually(lambda: store.last_runs(["py:shortages"]), timeout=20)

    titles = sorted(i["title"] for i in inbox(rita, warehouse))
    assert titles == [f"Replenish {key}" for key in KEYS]
