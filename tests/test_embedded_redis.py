"""The embedded Redis of `manage.py demo` keeps its data across restarts and crashes (AOF)."""

from __future__ import annotations

import signal
import socket
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


def _leave_time_wait_on(port: int) -> None:
    """A server on `port` that closes a connection first, as redis-server does to its
    clients when it stops: the kernel keeps the connection in TIME_WAIT on that port."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the server side closes first: its end waits in TIME_WAIT
        client.close()


def _time_wait_on(port: int) -> bool:
    """Whether a TCP connection of 127.0.0.1:`port` is in TIME_WAIT (state 06 in /proc)."""
    local = f"0100007F:{port:04X}"
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return any(r.split()[1] == local and r.split()[3] == "06" for r in rows)


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc/net/tcp")
def test_a_port_left_in_time_wait_is_free_for_the_embedded_server(tmp_path: Path):
    """Ctrl-C and `make demo` again: the demo's Redis keeps its port (issue 39, row I)."""
    port = embedded_redis.free_port()
    _leave_time_wait_on(port)
    assert _time_wait_on(port)

    assert embedded_redis.port_is_free(port)
    server = embedded_redis.start(port=port, data_dir=tmp_path / "redis", persist=True)
    try:
        assert server.client().ping()
        assert not embedded_redis.port_is_free(port)  # listened on: taken
    finally:
        server.stop()
