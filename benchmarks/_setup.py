"""Shared set-up for benchmarks: a fresh embedded Redis and a throw-away SQLite database."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

from devredis import embedded_redis


def start(settings: str = "config.settings") -> embedded_redis.EmbeddedRedis:
    """Start Redis, point Django at it and at a new database, migrate; returns the server.

    The environment set here is also what a server started by the benchmark inherits.
    """
    server = embedded_redis.start()
    os.environ["REDIS_URL"] = server.url
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = settings
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # Load generators poll as one user far above any real client's rate: the throttle still
    # runs on every request (it is part of the cost), it just never says no.
    os.environ["API_THROTTLE_RATE"] = "100000000/min"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return server


def slowlog_on(client) -> None:
    """Record every command's server-side duration (microseconds) in SLOWLOG."""
    client.config_set("slowlog-log-slower-than", 0)
    client.config_set("slowlog-max-len", 1_000_000)
    client.slowlog_reset()


def slowlog_durations(client, *commands: str) -> list[int]:
    """Durations (µs) of the logged commands whose name is one of `commands`."""
    wanted = {c.lower() for c in commands}
    entries = client.slowlog_get(1_000_000)
    out = []
    for entry in entries:
        command = entry["command"]
        name = (command.decode() if isinstance(command, bytes) else command).split()[0].lower()
        if name in wanted:
            out.append(int(entry["duration"]))
    return out


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else 0.0
