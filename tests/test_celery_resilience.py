"""Celery worker and beat outlive a Redis failover (role change) and a restart that empties it,
and together repair the subscription mirror afterwards without anyone acting."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings

from config.celery import app
from devredis import embedded_redis
from subscriptions import keys
from subscriptions.models import Subscription
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def beat(redis_server, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery -A config beat` process that asks for a reconcile twice a second."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",  # not tests.settings: it starts a Redis
        "REDIS_URL": redis_server.url,
        "CELERY_BROKER_URL": redis_server.url,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'beat.sqlite3'}",
        "SUBSCRIPTION_RECONCILE_SECONDS": "0.5",
    }
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel", "WARNING"),
            *("--schedule", str(tmp_path / "beat-schedule")),
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    yield process
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def change_role(client) -> None:
    """A failover as the worker sees it: the server turns replica, then master again."""
    client.execute_command("REPLICAOF", "127.0.0.1", str(embedded_redis.free_port()))
    try:
        # Blocked clients (the worker's BRPOP) are cut off with "UNBLOCKED force unblock".
        assert eventually(lambda: client.info("replication")["role"] == "slave", timeout=5)
    finally:
        client.execute_command("REPLICAOF", "NO", "ONE")


def test_worker_and_beat_survive_a_failover_and_an_empty_restart(
    redis, redis_server, beat, warehouse, rep_notice, role
):
    def members(warehouse, message_type) -> set[bytes]:
        return {m.decode() for m in redis.smembers(keys.subscribers(warehouse.pk, message_type.pk))}

    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10) as worker:
        # Beat is up and the worker runs what it sends: an emptied Redis is repaired.
        redis.flushall()
        assert eventually(lambda: members(warehouse, rep_notice) == {f"r:{role.pk}"})

        change_role(redis_server.client())
        redis_server.client().flushall()
        redis_server.stop()
        redis_server.restart()  # empty: the test server keeps nothing on disk
        assert members(warehouse, rep_notice) == set()

        # Nobody acts: beat keeps asking, the worker keeps reconciling.
        assert eventually(lambda: members(warehouse, rep_notice) == {f"r:{role.pk}"}, timeout=20)
        assert beat.poll() is None, beat.stderr.read().decode() if beat.stderr else ""
        assert worker.blueprint is not None
        assert worker.blueprint.state == 1  # RUN: the same worker, never stopped
