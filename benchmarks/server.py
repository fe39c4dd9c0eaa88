"""The HTTP servers the API rows are measured through, started as Procfile.production starts
them: gunicorn with sync workers (the REST API and the admin) and uvicorn with `--workers`
(the event stream; the one server of the demo).

Sync workers are the plain production shape of a WSGI Django site (one request at a time per
process). Two workers on two cores, as in the issue's figures. The server reads the same
environment as the benchmark process (Redis URL, database file).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from devredis.embedded_redis import free_port

WORKERS = 2


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    host: str
    port: int
    log_path: str

    def log_tail(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as log:
            return log.read()[-2000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def command(
    kind: str,
    port: int,
    workers: int,
    *,
    python: str = sys.executable,
    app: str = "benchmarks.wsgi:application",
) -> list[str]:
    """The server's command line, as in Procfile.production (the benchmark's app module; the
    peer passes its own venv's Python and WSGI module, benchmarks/peer.py)."""
    if kind == "gunicorn":
        return [
            python,
            "-m",
            "gunicorn",
            app,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--worker-class",
            "sync",
            "--log-level",
            "warning",
            "--timeout",
            "120",
        ]
    if kind == "uvicorn":
        return [
            sys.executable,
            "-m",
            "uvicorn",
            "benchmarks.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-access-log",
            "--log-level",
            "warning",
            "--timeout-graceful-shutdown",
            "2",
        ]
    raise ValueError(kind)


def start(*, workers: int = WORKERS, kind: str = "gunicorn", timeout: float = 60.0) -> Server:
    """Start gunicorn (or uvicorn) on a free local port and return once every worker answers."""
    port = free_port()
    return launch(
        command(kind, port, workers),
        port=port,
        workers=workers,
        name=kind,
        probe="/bench/floor/",  # 401/403 without a token: the worker is up
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"},
        timeout=timeout,
    )


def launch(
    args: list[str],
    *,
    port: int,
    workers: int,
    name: str,
    probe: str,
    env: dict[str, str],
    cwd: str | None = None,
    timeout: float = 60.0,
) -> Server:
    """Run a server's command line; return once `probe` has had several HTTP answers (any
    status: the worker is up) from each worker."""
    # A file, not a pipe: a full pipe would block a worker that logs an error.
    log_fd, log_path = tempfile.mkstemp(prefix=f"bench-{name}-", suffix=".log")
    process = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=log_fd)
    os.close(log_fd)
    server = Server(process, "127.0.0.1", port, log_path)
    deadline = time.monotonic() + timeout
    answered = 0
    while answered < workers * 4:  # several answers: each worker has loaded Django
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited at start-up: {server.log_tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{probe}", timeout=5):
                answered += 1
        except urllib.error.HTTPError:
            answered += 1
        except OSError:
            if time.monotonic() > deadline:
                server.stop()
                raise
            time.sleep(0.1)
    return server
