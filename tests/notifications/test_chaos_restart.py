"""Chaos: Redis restarts empty in the middle of a burst of publishes and polls. Whatever was
acknowledged after the restart reaches every subscriber, and polling clients receive it."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from config.redis import REDIS_UNAVAILABLE
from notifications.domain import PublishResult
from notifications.selectors import inbox_page
from notifications.services import publish
from subscriptions.models import Subscription
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

PUBLISHERS = 2


class Burst:
    """Publisher threads and one polling client per user, running until told to stop."""

    def __init__(self, warehouse, users) -> None:
        self.warehouse = warehouse
        self.users = users
        self.generation = 0  # 1 once the restarted Redis is up
        self.published: list[tuple[int, PublishResult]] = []
        self.refused: list[tuple[int, Exception]] = []
        self.seen: dict[int, set[str]] = {user.pk: set() for user in users}
        self.cursors: dict[int, int | None] = {user.pk: None for user in users}
        self.errors: list[BaseException] = []
        self.stop = threading.Event()
        self.threads = [
            *(threading.Thread(target=self._publish, args=(n,)) for n in range(PUBLISHERS)),
            threading.Thread(target=self._poll),
        ]

    def __enter__(self) -> Burst:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(10)

    def after_restart(self) -> list[PublishResult]:
        return [result for generation, result in self.published if generation == 1]

    def _guarded(self, work) -> None:
        try:
            while not self.stop.is_set():
                try:
                    work()
                except REDIS_UNAVAILABLE as exc:  # Redis is down: callers get 503 and retry
                    self._refused(exc)
                    self.stop.wait(0.01)
        except BaseException as exc:  # anything else fails the test
            self.errors.append(exc)
        finally:
            connection.close()

    def _refused(self, exc: Exception) -> None:
        self.refused.append((self.generation, exc))

    def _publish(self, n: int) -> None:
        counter = iter(range(1_000_000))

        def one() -> None:
            generation = self.generation  # read before publishing: it began after the restart
            result = publish(
                message_type="REP_NOTICE",
                warehouse=self.warehouse.pk,
                title=f"Replenish bin {n}-{next(counter)}",
            )
            self.published.append((generation, result))

        self._guarded(one)

    def _poll(self) -> None:
        def one() -> None:
            for user in self.users:
                self.poll_once(user)

        self._guarded(one)

    def poll_once(self, user) -> int:
        """One poll as a client does it: after its cursor, then the cursor moves on."""
        page = inbox_page(
            user=user, warehouse_id=self.warehouse.pk, since=self.cursors[user.pk], limit=200
        )
        self.seen[user.pk].update(item.notification.id for item in page.items)
        self.cursors[user.pk] = page.next_since
        return len(page.items)


def test_every_publish_acknowledged_after_an_empty_restart_reaches_every_subscriber(
    redis_server, warehouse, rep_notice, role, make_user
):
    rita, ralf, alice = make_user("rita", role), make_user("ralf", role), make_user("alice")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    started = time.monotonic()

    with Burst(warehouse, [rita, ralf, alice]) as burst:
        assert eventually(lambda: len(burst.published) >= 30, timeout=10)
        redis_server.client().flushall()  # nothing on disk either: it comes back empty
        redis_server.stop()
        redis_server.restart()
        burst.generation = 1
        assert eventually(lambda: len(burst.after_restart()) >= 60, timeout=10)
    # The clients poll until they have caught up.
    for user in (rita, ralf, alice):
        while burst.poll_once(user):
            pass

    assert burst.errors == []
    after = burst.after_restart()
    assert {result.recipients for result in after} == {2}  # the role's inbox and Alice's
    ids = {result.id for result in after}
    for user in (rita, ralf, alice):
        assert ids <= burst.seen[user.pk], (
            f"{user.username} missed {len(ids - burst.seen[user.pk])}"
        )
    assert [exc for generation, exc in burst.refused if generation == 1] == []
    assert time.monotonic() - started < 15
