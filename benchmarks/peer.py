"""The peer of issue 22: django-notifications-hq 1.8.3, served next to the project (rows 14, 15).

Its own venv (benchmarks/peer_venv.py) and its own Django site (benchmarks/peer_site/), run
with that directory as the working directory, so neither the project's root nor its
`notifications` package is on the peer's path. The site's database is PostgreSQL when
`PEER_DATABASE_URL` is set, else a SQLite file under var/bench-peer/; its users are logged in
with database sessions (the peer's views are `login_required`; it ships no token auth).

Served as the project is: `gunicorn -w N` with sync workers. Measured by the same load
generator, in the same rounds, as the project's targets (benchmarks/rows_shape.py).
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import subprocess
from dataclasses import dataclass
from typing import Any

from benchmarks import peer_venv, server
from benchmarks.context import Bench, Config
from devredis.embedded_redis import free_port

NAME = "django-notifications-hq 1.8.3"
UNREAD_COUNT = "/inbox/notifications/api/unread_count/"  # live_unread_notification_count
UNREAD_LIST = "/inbox/notifications/api/unread_list/?max=50"  # live_unread_notification_list
DATABASES = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}


@dataclass
class Peer:
    server: server.Server
    database: str  # "PostgreSQL" or "SQLite"
    rows: int  # notifications in the peer's table
    cookies: dict[str, str]  # "big" / "small": the Cookie header of that user's session

    def describe(self) -> str:
        return f"{self.rows:,} rows, {self.database}"


def skip_reason(config: Config, enabled: bool) -> str | None:
    if not enabled:
        return "--no-peer"
    if config.name == "tiny":
        # The test suite's preset: it must not build a venv or reach a package index.
        return "the tiny preset measures no peer"
    return None


def _env() -> dict[str, str]:
    """The peer's environment: the machine's, less anything that would point at the project."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "DATABASE_URL"}
    }
    env["DJANGO_SETTINGS_MODULE"] = "settings"
    env["PEER_SECRET_KEY"] = secrets.token_urlsafe(50)
    env["PEER_SQLITE_PATH"] = str(peer_venv.HOME / "peer.sqlite3")
    return env


def _prepare(bench: Bench, python: str, env: dict[str, str]) -> dict[str, Any]:
    """Migrate, load (unless loaded), make sessions; relays the script's progress lines."""
    config = bench.config
    process = subprocess.Popen(
        [python, "prepare.py", str(config.big), str(config.small)],
        cwd=peer_venv.SITE,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip())
        if not line.startswith("{"):
            bench.log(f"peer: {line.rstrip()}")
    if process.wait() != 0 or not lines or not lines[-1].startswith("{"):
        raise RuntimeError("the peer's prepare.py failed:\n" + "\n".join(lines[-30:]))
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _serve(python: str, env: dict[str, str], workers: int) -> server.Server:
    """The peer under gunicorn with sync workers, as the project is served, once every worker
    has answered (anonymous, its unread count answers 0 without touching the table; a wrong
    answer shows in `_check`)."""
    port = free_port()
    args = server.command("gunicorn", port, workers, python=python, app="wsgi:application")
    return server.launch(
        [*args, "--chdir", str(peer_venv.SITE)],
        port=port,
        workers=workers,
        name="peer-gunicorn",
        probe=UNREAD_COUNT,
        env=env,
        cwd=str(peer_venv.SITE),
    )


def _get(peer: Peer, path: str, user: str) -> dict[str, Any]:
    connection = http.client.HTTPConnection(peer.server.host, peer.server.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Cookie": peer.cookies[user]})
        reply = connection.getresponse()
        if reply.status != 200:
            raise ValueError(f"GET {path} answered {reply.status}")
        body: dict[str, Any] = json.loads(reply.read())
        return body
    finally:
        connection.close()


def _check(peer: Peer, big: int, small: int) -> None:
    """The peer's answers are its users' real figures, not an anonymous zero, before timing."""
    try:
        counts = [_get(peer, UNREAD_COUNT, u)["unread_count"] for u in ("big", "small")]
        listed = _get(peer, UNREAD_LIST, "big")
    except (OSError, ValueError, KeyError) as error:
        raise RuntimeError(f"the peer failed: {error!r}\n{peer.server.log_tail()}") from error
    items = listed.get("unread_list", [])
    if counts != [big, small] or listed.get("unread_count") != big or len(items) != 50:
        raise RuntimeError(
            f"the peer answered unread counts {counts} (expected {[big, small]}) and "
            f"{len(items)} list items (expected 50)\n{peer.server.log_tail()}"
        )


def start(bench: Bench, *, enabled: bool = True) -> Peer | None:
    """The peer's server, ready and checked; None (with the reason logged) when skipped."""
    config = bench.config
    reason = skip_reason(config, enabled)
    python = None
    if reason is None:
        try:
            python = str(peer_venv.ensure(bench.log))
        except peer_venv.PeerUnavailable as error:
            reason = f"its venv could not be made: {error}"
    if python is None:
        bench.log(f"the peer ({NAME}) is not measured: {reason}")
        return None
    env = _env()
    prepared = _prepare(bench, python, env)
    database = DATABASES.get(prepared["vendor"], prepared["vendor"])
    bench.log(
        f"the peer: {NAME} on Django {prepared['django']}, {database}, "
        f"{prepared['rows']:,} notifications, gunicorn -w {config.http_workers} (sync)"
    )
    srv = _serve(python, env, config.http_workers)
    cookies = {user: f"sessionid={key}" for user, key in prepared["sessions"].items()}
    peer = Peer(srv, database, prepared["rows"], cookies)
    try:
        _check(peer, config.big, config.small)
    except BaseException:
        srv.stop()
        raise
    return peer
