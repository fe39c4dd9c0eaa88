"""Run Python in another process of the product, as `manage.py shell` or a data import would:
a fresh interpreter with the product's own settings (`config.settings`), the test's Redis and
the test's database.

The test process is the running server: what it holds per process was loaded before, and the
other process's change must reach it through what every process shares (Redis, the database).

PostgreSQL: the other process connects to the test database (use a `transaction=True` test,
so what the test wrote is committed and what the other process writes is seen). SQLite: the
test database lives in this process's memory, so it is copied to a file for the other
process, and what that process wrote is copied back (sqlite3's backup) once it has ended: this
process then reads it as if another process had written it (no signal ran here).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from django.db import connection

BASE_DIR = Path(__file__).resolve().parent.parent

_PRELUDE = """
import django
django.setup()
"""


def _database_url(tmp: Path) -> str:
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        copy = tmp / "shared.sqlite3"
        copy.unlink(missing_ok=True)
        connection.ensure_connection()
        with sqlite3.connect(copy) as target:
            connection.connection.backup(target)
        return f"sqlite:///{copy}"
    user, password = settings["USER"], settings["PASSWORD"]
    host, port = settings["HOST"] or "127.0.0.1", settings["PORT"] or 5432
    return f"postgres://{user}:{password}@{host}:{port}/{settings['NAME']}"


def _take_back(url: str) -> None:
    if connection.vendor != "sqlite":
        return
    with sqlite3.connect(url.removeprefix("sqlite:///")) as source:
        source.backup(connection.connection)


def run(code: str, tmp: Path) -> str:
    """Run `code` (after django.setup()) in a new Python process; its standard output. Fails
    the test with the process's error output when it fails."""
    url = _database_url(tmp)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": url,
        "PYTHONPATH": str(BASE_DIR),
    }
    done = subprocess.run(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(code)],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"the other process failed:\n{done.stderr[-4000:]}")
    _take_back(url)
    return done.stdout
