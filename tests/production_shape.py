"""The production shape of docs/operating/deploy.md on loopback, for tests of what the servers
themselves do: gunicorn started by Procfile.production's `web` line, behind nginx running the
shipped deploy/nginx/wms-proxy.conf.

Only the site wrapper is the test's own (listen address, upstream ports, log and temporary
paths); everything requests meet is the shipped file. Clients connect from different loopback
addresses (127.0.0.0/8 all reaches this machine), so nginx sees several machines.

nginx comes from the system (`apt-get install nginx`). Without it these tests skip, unless
WMS_REQUIRE_NGINX=1 (as `.ci/run` sets): then a missing nginx fails them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from devredis.embedded_redis import free_port
from tests.settings import REDIS_SERVER

BASE_DIR = Path(__file__).resolve().parent.parent
PROXY_CONF = BASE_DIR / "deploy" / "nginx" / "wms-proxy.conf"
# Variables of the test process that must not leak into the servers' settings.
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
    "TRUSTED_PROXIES",
    "API_DOCS_PUBLIC",
    "FORWARDED_ALLOW_IPS",
}


def nginx_executable() -> str | None:
    configured = os.environ.get("WMS_NGINX")
    if configured:
        return configured
    found = shutil.which("nginx")
    if found:
        return found
    # Debian puts it in /usr/sbin, which is not on every user's PATH.
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


def require_nginx() -> str:
    executable = nginx_executable()
    if executable is None:
        reason = "nginx not found: install Debian's `nginx` (apt-get install nginx)"
        if os.environ.get("WMS_REQUIRE_NGINX") == "1":
            pytest.fail(f"{reason} (WMS_REQUIRE_NGINX=1: the proxy tests must run here)")
        pytest.skip(f"{reason}: tests behind the shipped proxy skipped")
    return executable


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case; repeated ones joined with ", "
    cookies: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


def parse_answer(raw: bytes) -> Answer:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    cookies: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if name == "set-cookie":
            cookie_name, _, rest = value.partition("=")
            cookies[cookie_name] = rest.split(";", 1)[0]
    return Answer(int(status_line.split()[1]), headers, cookies, body)


def exchange(port: int, request: bytes, *, source: str, timeout: float = 15.0) -> Answer:
    """Send raw bytes from the loopback address `source`; read the answer until the server
    closes (requests are HTTP/1.0, so nothing is chunked). A server may answer before the whole
    body arrived (nginx's 413): the rest is then not sent."""
    with socket.create_connection(
        ("127.0.0.1", port), timeout=timeout, source_address=(source, 0)
    ) as connection:
        with suppress(BrokenPipeError, ConnectionResetError):
            connection.sendall(request)
        chunks = []
        while True:
            try:
                chunk = connection.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return parse_answer(b"".join(chunks))


def http_request(
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> bytes:
    lines = [f"{method} {path} HTTP/1.0", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body


@dataclass
class Site:
    """The front (nginx) and, behind it, the web server (gunicorn)."""

    nginx_port: int
    web_port: int
    logs: list[Path] = field(default_factory=list)

    def get(self, path: str, *, source: str, headers: dict[str, str] | None = None) -> Answer:
        return exchange(self.nginx_port, http_request("GET", path, headers=headers), source=source)

    def post(
        self, path: str, body: bytes, *, source: str, headers: dict[str, str] | None = None
    ) -> Answer:
        request = http_request("POST", path, headers=headers, body=body)
        return exchange(self.nginx_port, request, source=source)

    def log_tail(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in self.logs)


def server_environment(directory: Path, **extra: str) -> dict[str, str]:
    """The settings of a deployment: DEBUG off, its own database, the suite's plain Redis
    under its own key prefix, and nothing else of the test process."""
    environment = {k: v for k, v in os.environ.items() if k not in NOT_PASSED}
    environment.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY="test-only-production-shape-secret",
        DEBUG="0",
        DATABASE_URL=f"sqlite:///{directory / 'db.sqlite3'}",
        REDIS_URL=REDIS_SERVER.url,
        CELERY_BROKER_URL=REDIS_SERVER.url,
        WMS_REDIS_PREFIX="wms-proxy-test",
        # gunicorn's control socket goes here, not into the shared ~/.gunicorn/.
        XDG_RUNTIME_DIR=str(directory),
        # Procfile.production names its programs: the project's venv first.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    environment.update(extra)
    return environment


def prepare_database(environment: dict[str, str], script: str) -> None:
    """Migrate the deployment's database and run `script` (Django set up) against it."""
    code = "\n".join(
        [
            "from django.core.management import call_command",
            "call_command('migrate', verbosity=0)",
            script,
        ]
    )
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=BASE_DIR,
        env=environment,
        check=True,
        capture_output=True,
        timeout=180,
    )


def procfile_line(name: str) -> str:
    for line in (BASE_DIR / "Procfile.production").read_text().splitlines():
        process, _, command = line.partition(":")
        if process.strip() == name:
            return command.strip()
    raise LookupError(name)


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, deadline: float) -> None:
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                tail = log.read_text()[-3000:]
                raise RuntimeError(f"did not listen on {port}:\n{tail}") from None
            time.sleep(0.1)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def nginx_config(directory: Path, *, port: int, web_port: int, stream_port: int) -> str:
    return f"""
daemon off;
# One process, as whoever runs the test: as root, a master would hand requests to workers
# running as `nobody`, which may not write the temporary files below.
master_process off;
pid {directory}/nginx.pid;
error_log {directory}/nginx-error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {directory}/client_body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    upstream wms_web    {{ server 127.0.0.1:{web_port}; }}
    upstream wms_stream {{ server 127.0.0.1:{stream_port}; }}
    server {{
        listen 127.0.0.1:{port};
        include {PROXY_CONF};
    }}
}}
"""


@contextmanager
def running(directory: Path, *, setup: str = "", **settings: str) -> Iterator[Site]:
    """gunicorn (Procfile.production's web line, one worker) behind nginx; yields the Site.

    `setup` runs once against the freshly migrated database (e.g. to create users); `settings`
    are more environment variables of the deployment. The stream's upstream is a port nothing
    listens on: the stream server is not part of these tests.
    """
    nginx = require_nginx()
    environment = server_environment(directory, **settings)
    prepare_database(environment, setup)
    web_port, nginx_port, stream_port = free_port(), free_port(), free_port()
    web_log, nginx_log = directory / "gunicorn.log", directory / "nginx-error.log"
    command = procfile_line("web")
    environment.update(HOST="127.0.0.1", PORT=str(web_port), WEB_CONCURRENCY="1")
    with web_log.open("wb") as log:
        web = subprocess.Popen(
            ["/bin/sh", "-c", f"exec {command}"],
            cwd=BASE_DIR,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    front: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 60
        wait_for_port(web_port, web, web_log, deadline)
        conf = directory / "nginx.conf"
        conf.write_text(
            nginx_config(directory, port=nginx_port, web_port=web_port, stream_port=stream_port)
        )
        nginx_log.touch()
        front = subprocess.Popen(
            [nginx, "-p", str(directory), "-c", str(conf), "-e", str(nginx_log)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(nginx_port, front, nginx_log, deadline)
        yield Site(nginx_port=nginx_port, web_port=web_port, logs=[web_log, nginx_log])
    finally:
        if front is not None:
            stop(front)
        stop(web)
