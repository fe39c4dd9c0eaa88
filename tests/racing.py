"""Racers released together: beats, workers or taps that run the same thing at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def race(count: int, work: Callable[[], T]) -> tuple[list[T], list[BaseException]]:
    """Run `work` in `count` threads released together (each with its own database
    connection, closed after): what the racers returned and what they raised."""
    barrier = threading.Barrier(count)
    done: list[T] = []
    failures: list[BaseException] = []

    def run() -> None:
        from django.db import connection

        try:
            barrier.wait()
            done.append(work())
        except BaseException as exc:  # reported to the caller; a thread cannot fail a test
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done, failures


def crashed(failures: list[BaseException]) -> list[BaseException]:
    """The failures but SQLite refusing a racer outright ("database table is locked"): such a
    racer is a worker that crashed, whose work a later pass does (never twice)."""
    return [f for f in failures if "locked" not in str(f)]
