"""REDIS_URL for one Redis or a Redis Cluster, and what cluster mode requires."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings

from config.redis_urls import cluster_config, is_cluster_url


def test_a_cluster_url_lists_its_startup_nodes():
    config = cluster_config("redis+cluster://10.0.0.1:7000, 10.0.0.2:7001,[::1]:7002")
    assert config.nodes == [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("::1", 7002)]
    assert config.options == {"ssl": False}


def test_credentials_and_tls_come_from_the_url():
    config = cluster_config("rediss+cluster://ops:p%40ss@redis-a:6380,redis-b")
    assert config.nodes == [("redis-a", 6380), ("redis-b", 6379)]
    assert config.options == {"ssl": True, "username": "ops", "password": "p@ss"}


def test_only_cluster_schemes_are_cluster_urls():
    assert is_cluster_url("redis+cluster://h:1")
    assert is_cluster_url("rediss+cluster://h:1")
    assert not is_cluster_url("redis://h:1/0")


def test_a_bad_node_address_is_refused():
    with pytest.raises(ValueError, match="host:port"):
        cluster_config("redis+cluster://h:port")


def load_settings(**env: str) -> subprocess.CompletedProcess:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"REDIS_URL", "REDIS_CLUSTER", "CELERY_BROKER_URL"}
    }
    environment.update(env, DJANGO_SETTINGS_MODULE="config.settings")
    code = (
        "from django.conf import settings; "
        "print(settings.REDIS_CLUSTER, settings.REDIS_CLUSTER_NODES, "
        "settings.CACHES['default']['LOCATION'], settings.CELERY_BROKER_URL)"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        env=environment,
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
        timeout=60,
    )


def test_cluster_mode_requires_a_plain_redis_for_the_broker():
    run = load_settings(REDIS_URL="redis+cluster://127.0.0.1:7000")
    assert run.returncode != 0
    assert "set CELERY_BROKER_URL to a plain Redis" in run.stderr


def test_in_cluster_mode_broker_and_cache_share_the_plain_redis():
    run = load_settings(
        REDIS_URL="redis://127.0.0.1:7000/0",
        REDIS_CLUSTER="1",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/1",
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [
        "True",
        "[('127.0.0.1',",
        "7000)]",
        "redis://127.0.0.1:6379/1",
        "redis://127.0.0.1:6379/1",
    ]
