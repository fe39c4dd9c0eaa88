"""The beat task repairs an emptied Redis, run by a real Celery worker."""

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings

from config.celery import app
from subscriptions.models import Subscription
from subscriptions.tasks import reconcile_subscriptions
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def test_beat_runs_the_reconcile_at_least_every_minute():
    entry = settings.CELERY_BEAT_SCHEDULE["reconcile-subscriptions"]
    assert entry["task"] == reconcile_subscriptions.name
    assert entry["schedule"] <= 60


def test_a_real_worker_repairs_redis_after_flushall(redis, warehouse, rep_notice, role, members):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    redis.flushall()
    assert members(warehouse, rep_notice) == set()

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        # Without a result backend, wait on the condition itself: the set coming back.
        reconcile_subscriptions.delay()
        assert eventually(lambda: members(warehouse, rep_notice) == {f"r:{role.pk}"})
