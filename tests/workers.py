"""A real Celery worker in its own process, which a test can kill (SIGKILL) mid-task.

The process is forked from the test, so it shares the test's database (the in-memory SQLite
test database is copied as it is at the fork; PostgreSQL is reached over a new connection) and
its Redis, and it can be given a `prepare` callable that runs in the worker before it starts,
for instance to make a task stop half-way where the test can kill it.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections

# Connections inherited from the test process: never closed in the worker, since closing a
# socket shared with the parent would end the parent's session too. os._exit drops them.
_inherited: list[Any] = []


def _run_worker(prepare: Callable[[], None] | None, queues: list[str] | None) -> None:
    from config.celery import app

    for conn in connections.all(initialized_only=True):
        # An in-memory SQLite database lives in this process's copy of memory: keep using it.
        if conn.vendor != "sqlite" and conn.connection is not None:
            _inherited.append(conn.connection)
            conn.connection = None
    if prepare is not None:
        prepare()
    worker = app.Worker(
        hostname=f"chaos-{os.getpid()}@localhost",
        pool="solo",
        concurrency=1,
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        loglevel="WARNING",
        redirect_stdouts=False,
        **({"queues": queues} if queues else {}),
    )
    worker.start()


@contextmanager
def worker_process(
    prepare: Callable[[], None] | None = None, queues: list[str] | None = None
) -> Iterator[Any]:
    """A worker process consuming the test's queue (or `queues`, e.g. the outbox's); killed
    (if still alive) on exit."""
    process = multiprocessing.get_context("fork").Process(
        target=_run_worker, args=(prepare, queues), daemon=True
    )
    process.start()
    try:
        yield process
    finally:
        if process.is_alive():
            process.kill()
        process.join(10)


def kill(process: Any) -> None:
    """SIGKILL: no clean-up, no finally blocks, as when the machine or the OOM killer strikes."""
    process.kill()
    process.join(10)
    assert not process.is_alive()
