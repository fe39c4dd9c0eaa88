"""Fixtures of the outbox's tests: a handler kind of their own (`probe`), whose sends a test
can hold back and count, and the broker's queue of the outbox's task."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from django.conf import settings as django_settings
from django.db import connections
from redis import Redis

from outbox import handlers
from outbox.handlers import Delivery, Handler, Outcome

PROBE = "probe"


class Probe:
    """A receiver: counts the sends it gets and answers `outcome`; `hold()` keeps the first
    send waiting (a slow receiver) until `release()`."""

    def __init__(self) -> None:
        self.calls = 0
        self.outcome = Outcome.SUCCEEDED
        self._held = threading.Event()
        self._released = threading.Event()
        self._lock = threading.Lock()

    def hold(self) -> None:
        self._held.set()

    def release(self) -> None:
        self._released.set()

    def send(self, message) -> Delivery:
        with self._lock:
            self.calls += 1
            first = self.calls == 1
        if first and self._held.is_set():
            assert self._released.wait(30), "the test never released the first send"
        return Delivery(self.outcome, result="ok" if self.outcome == Outcome.SUCCEEDED else "")


@pytest.fixture
def probe(monkeypatch) -> Probe:
    found = Probe()
    monkeypatch.setitem(handlers._handlers, PROBE, Handler(send=found.send))
    return found


@pytest.fixture
def broker() -> Iterator[Redis]:
    """The Celery broker (a plain Redis, also on the cluster pass)."""
    client = Redis.from_url(django_settings.CELERY_BROKER_URL)
    yield client
    client.close()


@pytest.fixture
def queued(broker: Redis) -> Callable[[], int]:
    """How many outbox tasks wait on the broker's outbox queue, empty at the start (on the
    cluster pass the broker is not the Redis the `redis` fixture empties)."""
    broker.delete(django_settings.OUTBOX_QUEUE)
    return lambda: int(broker.llen(django_settings.OUTBOX_QUEUE))


def in_thread(work: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """Run `work` in a thread of its own (another worker), with its own database connection."""
    results: list[object] = []

    def run() -> None:
        try:
            results.append(work())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, results
