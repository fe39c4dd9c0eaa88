"""The production shape on loopback, as docs/operating/deploy.md runs it: Redis with AOF,
gunicorn (the REST API), uvicorn (the event stream), one Celery worker consuming every queue,
Celery beat, and nginx with the shipped deploy/nginx/wms-proxy.conf in front when it is
installed.

Every server is started from its line of Procfile.production (through `/bin/sh -c "exec
…"`, in a process group of its own, so that a kill reaches a server's worker processes too),
with its output in a log file of the run's folder. Only the simulation's own processes are
ever signalled.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import redis

from devredis import embedded_redis
from devredis.embedded_redis import free_port

BASE_DIR = Path(__file__).resolve().parent.parent.parent
PROCFILE = BASE_DIR / "Procfile.production"
PROXY_CONF = BASE_DIR / "deploy" / "nginx" / "wms-proxy.conf"
# Queues of the one worker: the default queue, pushes, the outbox and the rules' dry runs.
QUEUES = "celery,push,outbox,rules"
# Variables of the calling shell that must not reach the servers' settings.
NOT_PASSED = {
    "SECRET_KEY",
    "DEBUG",
    "DJANGO_SETTINGS_MODULE",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "DATABASE_URL",
    "REDIS_URL",
    "REDIS_CLUSTER",
    "CELERY_BROKER_URL",
    "PROMETHEUS_MULTIPROC_DIR",
    "WMS_REDIS_PREFIX",
}


def procfile_line(name: str) -> str:
    """The command of one process of Procfile.production."""
    for line in PROCFILE.read_text().splitlines():
        process, _, command = line.partition(":")
        if process.strip() == name:
            return command.strip()
    raise LookupError(f"{name} is not a process of {PROCFILE.name}")


def nginx_executable() -> str | None:
    found = shutil.which("nginx")
    if found:
        return found
    # Debian puts it in /usr/sbin, which is not on every user's PATH.
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


@dataclass
class Process:
    """One server, started from a command line in a process group of its own."""

    name: str
    args: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def start(self) -> None:
        self.starts += 1
        with self.log.open("ab") as out:
            out.write(f"\n--- start {self.starts} at {time.time():.3f}\n".encode())
            out.flush()
            self.popen = subprocess.Popen(
                self.args,
                cwd=BASE_DIR,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL to the whole group (the server and its workers), as a crash would."""
        if self.popen is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()

    def terminate(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        """SIGTERM, and SIGKILL to the group after 15 s (or at once for what is left)."""
        if self.popen is None:
            return
        self.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):  # workers a stopped master left behind
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


@dataclass(frozen=True)
class Sizes:
    """How many processes of each server (Procfile.production's variables)."""

    web: int = 3  # WEB_CONCURRENCY: gunicorn sync workers
    stream: int = 2  # STREAM_CONCURRENCY: uvicorn workers
    worker: int = 2  # WORKER_CONCURRENCY: the Celery worker's pool
    proxy: bool = True  # nginx in front, when installed


@dataclass
class Shape:
    """The running servers, their ports, and what the clients connect to."""

    folder: Path
    redis: embedded_redis.EmbeddedRedis
    env: dict[str, str]
    web_port: int
    stream_port: int
    proxy_port: int | None = None
    processes: dict[str, Process] = field(default_factory=dict)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port or self.web_port}"

    @property
    def stream_base(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port or self.stream_port}"

    def start_servers(self, sizes: Sizes, *, timeout: float = 120.0) -> None:
        env = dict(
            self.env,
            HOST="127.0.0.1",
            PORT=str(self.web_port),
            STREAM_PORT=str(self.stream_port),
            WEB_CONCURRENCY=str(sizes.web),
            STREAM_CONCURRENCY=str(sizes.stream),
            WORKER_CONCURRENCY=str(sizes.worker),
            BEAT_SCHEDULE_FILE=str(self.folder / "celerybeat-schedule"),
        )
        worker = f"{procfile_line('worker')} -Q {QUEUES} -n floor@%h"
        lines = {
            "web": procfile_line("web"),
            "stream": procfile_line("stream"),
            "worker": worker,
            "beat": procfile_line("beat"),
        }
        for name, line in lines.items():
            process = Process(
                name, ["/bin/sh", "-c", f"exec {line}"], env, self.folder / f"{name}.log"
            )
            self.processes[name] = process
            process.start()
        deadline = time.monotonic() + timeout
        self._wait_http(self.processes["web"], self.web_port, deadline, answers=sizes.web * 3)
        self._wait_http(
            self.processes["stream"], self.stream_port, deadline, answers=sizes.stream * 3
        )
        self.wait_for_worker(deadline)
        nginx = nginx_executable() if sizes.proxy else None
        if nginx is not None:
            self._start_proxy(nginx, deadline)

    def wait_for_worker(self, deadline: float) -> None:
        """The worker says `ready` in its log once it consumes (after each start)."""
        worker = self.processes["worker"]
        marker = f"--- start {worker.starts} at"
        while True:
            text = worker.tail(200_000)
            if " ready." in text.rsplit(marker, 1)[-1]:
                return
            if not worker.alive or time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker did not start:\n{worker.tail()}")
            time.sleep(0.2)

    def _wait_http(self, process: Process, port: int, deadline: float, *, answers: int) -> None:
        """Until /healthz has answered `answers` times (each worker has loaded Django)."""
        answered = 0
        while answered < answers:
            if not process.alive:
                raise RuntimeError(f"{process.name} exited at start-up:\n{process.tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10):
                    answered += 1
            except urllib.error.HTTPError:
                answered += 1
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{process.name} did not answer:\n{process.tail()}"
                    ) from None
                time.sleep(0.2)

    def _start_proxy(self, nginx: str, deadline: float) -> None:
        port = free_port()
        folder = self.folder / "nginx"
        folder.mkdir(exist_ok=True)
        conf = folder / "nginx.conf"
        conf.write_text(_nginx_config(folder, port, self.web_port, self.stream_port))
        process = Process(
            "proxy", [nginx, "-p", str(folder), "-c", str(conf)], self.env, folder / "out.log"
        )
        self.processes["proxy"] = process
        process.start()
        self.proxy_port = port
        self._wait_http(process, port, deadline, answers=1)

    def kill_redis(self) -> int:
        """SIGKILL Redis; the number of keys it held just before."""
        keys = -1
        with contextlib.suppress(redis.RedisError):  # a count for the report only
            keys = int(self.redis.client().dbsize())
        self.redis.process.kill()
        self.redis.process.wait()
        return keys

    def restart_redis(self) -> int:
        """Start Redis again on its port, from its append-only file; the keys it loaded."""
        self.redis.restart()
        return int(self.redis.client().dbsize())

    def restart(self, name: str, *, timeout: float = 90.0) -> None:
        process = self.processes[name]
        process.start()
        if name == "worker":
            self.wait_for_worker(time.monotonic() + timeout)

    def stop(self) -> None:
        """Every server asked to stop at once, then waited for; Redis last."""
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            process.stop()
        self.redis.stop()


def environment(folder: Path, *, redis_url: str, database_url: str, **extra: str) -> dict[str, str]:
    """The deployment's settings: its own database, Redis with AOF, DEBUG off, nothing else
    of the calling shell's settings."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_PASSED}
    metrics = folder / "metrics"
    metrics.mkdir(exist_ok=True)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        CELERY_BROKER_URL=redis_url,
        PROMETHEUS_MULTIPROC_DIR=str(metrics),
        LOG_LEVEL="WARNING",
        # gunicorn's control socket goes here, not into the shared ~/.gunicorn/.
        XDG_RUNTIME_DIR=str(folder),
        # Procfile.production names its programs: this Python's environment first.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    env.update(extra)
    return env


def start_redis(folder: Path) -> embedded_redis.EmbeddedRedis:
    """Redis as deploy.md runs it: the append-only file, fsynced every second."""
    return embedded_redis.start(data_dir=folder / "redis", persist=True)


def _nginx_config(folder: Path, port: int, web_port: int, stream_port: int) -> str:
    return f"""
daemon off;
# One process, as whoever runs the simulation: as root, a master would hand requests to
# workers running as `nobody`, which may not write the temporary files below.
master_process off;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
worker_rlimit_nofile 8192;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    upstream wms_web    {{ server 127.0.0.1:{web_port}; }}
    upstream wms_stream {{ server 127.0.0.1:{stream_port}; }}
    server {{
        listen 127.0.0.1:{port};
        include {PROXY_CONF};
    }}
}}
"""
