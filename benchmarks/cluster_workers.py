"""The simulated operators and publishers of `python -m benchmarks.cluster_load`.

Each worker is a process of its own (started with `spawn`, so it builds its own Django and its
own RedisCluster client from the environment the parent set), because on CPython one process
cannot drive more than one core. It uses the product through Python, not HTTP: the selectors
`inbox_page` / `unread_summary` and `publish()`, exactly as the API views call them (the
role lookup in the database included), so what it measures is Redis's side of the product;
the web tier is priced by rows 1-3 of `python -m benchmarks`.

One **poll round** is what the warehouse page does every `pollIntervalSeconds`
(web/static/web/js/notifications.js `poll()`): the list after the operator's cursor, 200 at
most; and, when something new came, the reload: the unread summary and the first page of the
inbox with read ones included (the page walks up to 5 pages; one is read here). The page's
chat poll is not simulated.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from typing import Any

PAGE = 200  # the page's poll and inbox page size (notifications.js INBOX_SIZE)
TITLE = "Replenish A-01-03"
BODY = "Stock is -12 after wave 8812"
DATA = {"bin": "A-01-03", "qty": -12}


@dataclass
class Tally:
    """What one worker did in one phase."""

    rounds: int = 0
    reloads: int = 0
    publishes: int = 0
    deliveries: int = 0
    errors: list[str] = field(default_factory=list)
    round_ms: list[float] = field(default_factory=list)
    publish_ms: list[float] = field(default_factory=list)


@dataclass
class _Operator:
    user: Any
    warehouse_id: int
    since: int | None = None


def serve(
    operators: list[tuple[int, int]],
    targets: list[tuple[str, int]],
    commands: Queue,
    results: Queue,
) -> None:
    """Set up, catch every operator up once (not measured), then run phases on command.

    `operators` are (user id, warehouse id); `targets` (message type code, warehouse id).
    Commands: ("run", phase, seconds, publishes_per_second) or None to stop.
    """
    import django

    django.setup()
    from django.contrib.auth.models import User

    users = User.objects.in_bulk([user_id for user_id, _ in operators])
    crew = [_Operator(users[user_id], warehouse_id) for user_id, warehouse_id in operators]
    rng = random.Random()
    warm = Tally()
    for operator in crew:
        _poll_round(operator, warm)
    results.put(("ready", warm.errors))
    while (command := commands.get()) is not None:
        _, phase, seconds, rate = command
        results.put(("done", _run(phase, seconds, rate, crew, targets, rng)))


def _run(
    phase: str,
    seconds: float,
    rate: float,
    crew: list[_Operator],
    targets: list[tuple[str, int]],
    rng: random.Random,
) -> Tally:
    """`polls`: poll rounds only; `publishes`: publishes only, back to back; `mixed`: poll
    rounds, with a publish whenever one is due at `rate` per second."""
    tally = Tally()
    start = time.monotonic()
    end = start + seconds
    due = start + (rng.random() / rate if rate else seconds)
    while (now := time.monotonic()) < end:
        if phase == "publishes" or (phase == "mixed" and rate and now >= due):
            _publish(rng.choice(targets), tally)
            due += 1 / rate if rate else seconds
        else:
            _poll_round(rng.choice(crew), tally)
    return tally


def _poll_round(operator: _Operator, tally: Tally) -> None:
    from config.redis import REDIS_UNAVAILABLE
    from notifications.selectors import inbox_page, unread_summary

    began = time.perf_counter()
    try:
        page = inbox_page(
            user=operator.user,
            warehouse_id=operator.warehouse_id,
            since=operator.since,
            limit=PAGE,
        )
        caught_up = operator.since is not None
        operator.since = page.next_since
        if page.items and caught_up:
            unread_summary(user=operator.user, warehouse_id=operator.warehouse_id)
            inbox_page(
                user=operator.user,
                warehouse_id=operator.warehouse_id,
                limit=PAGE,
                include_read=True,
            )
            tally.reloads += 1
    except REDIS_UNAVAILABLE as exc:
        tally.errors.append(f"poll: {exc!r}")
        return
    tally.round_ms.append((time.perf_counter() - began) * 1000)
    tally.rounds += 1


def _publish(target: tuple[str, int], tally: Tally) -> None:
    from config.redis import REDIS_UNAVAILABLE
    from notifications.services import publish

    message_type, warehouse_id = target
    began = time.perf_counter()
    try:
        result = publish(
            message_type=message_type, warehouse=warehouse_id, title=TITLE, body=BODY, data=DATA
        )
    except REDIS_UNAVAILABLE as exc:
        tally.errors.append(f"publish: {exc!r}")
        return
    tally.publish_ms.append((time.perf_counter() - began) * 1000)
    tally.publishes += 1
    tally.deliveries += result.recipients
