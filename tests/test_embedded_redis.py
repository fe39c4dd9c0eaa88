"""The embedded Redis of `manage.py demo` keeps its data across restarts and crashes (AOF)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from devredis import embedded_redis


@pytest.fixture
def persistent(tmp_path: Path):
    server = embedded_redis.start(data_dir=tmp_path / "redis", persist=True)
    yield server
    server.stop()


def test_a_persistent_server_is_configured_as_documented(persistent):
    client = persistent.client()

    assert client.config_get("appendonly") == {"appendonly": "yes"}
    assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
    assert client.config_get("save") == {"save": "60 1"}


@pytest.mark.parametrize("how", ["stopped", "killed"])
def test_data_survives_a_restart_and_a_crash(persistent, how):
    persistent.client().hset("wms:{wh:1}:notes", "1", '{"title": "Replenish A-01-03"}')
    if how == "killed":
        persistent.process.send_signal(signal.SIGKILL)
        persistent.process.wait()
    else:
        persistent.stop()

    persistent.restart()

    assert persistent.client().hget("wms:{wh:1}:notes", "1") == b'{"title": "Replenish A-01-03"}'


def test_the_test_server_persists_nothing(redis_server):
    # Outage tests rely on a restart coming back empty.
    assert redis_server.persist is False
    assert redis_server.client().config_get("appendonly") == {"appendonly": "no"}
    assert redis_server.client().config_get("save") == {"save": ""}
