"""What every row needs: the sizes of a run, the Redis probe, and helpers to make users.

The rows reach the product only through its contracts (the REST API, `publish()`, the chat
services, the sweep), so they keep measuring whatever the read model becomes.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import redis

from benchmarks.probes import RedisProbe


@dataclass(frozen=True)
class Config:
    """The sizes of one run. `full` is the issue's table; `quick` and `tiny` are smaller."""

    name: str
    rounds: int
    small: int  # notifications in the small inbox
    big: int  # notifications visible to the big users (5 types of big / 5 each)
    http_seconds: float  # per target per round
    http_connections: int
    http_workers: int  # gunicorn sync worker processes
    http_warmup_seconds: float  # per target, before the rounds (not measured)
    polls_per_round: int  # row 4, per side
    fanout: int  # row 6: inboxes per publish
    publishes_per_round: int  # row 6, per side
    memory_publishes: int  # row 7, per side per round
    chat_senders: int  # row 9
    sends_per_sender: int  # row 9, per side per round
    chats: int  # row 10
    pending: int  # row 10: messages pending over all chats
    idle_fetches: int  # row 10: fetches with nothing new, per side per round
    sweep_users: int  # row 11
    sweep_entries: int  # row 11: inbox entries (users x notifications)
    streams: int = 1000  # row 16: event streams opened at once
    press_alerts: int = 200  # row 17: presses (and claims) per side per round
    followup_alerts: int = 10_000  # row 18: open alerts that remind and e-mail
    notice_members: int = 10_000  # row 19: members of a notice's audience (its roster)
    notice_publish_members: int = 5_000  # row 20: members a notice is published to
    notice_publishes: int = 50  # row 20: publishes per side per round
    canary_warehouses: int = 1000  # row 21: active warehouses that get canaries
    canary_history: int = 60  # row 21: intervals of canaries before the rounds (an hour)
    quiet_alerts: int = 2_000  # row 22: alerts already in each warehouse, quiet floor on / off
    wake_alerts: int = 10_000  # row 22: alerts a silence held back, woken at its end

    @property
    def mark_sizes(self) -> tuple[int, int]:
        """Unread counts of the two mark-all-read users (one type, then all five)."""
        return self.big // 5, self.big


FULL = Config(
    name="full",
    rounds=5,
    small=20,
    big=10_000,
    http_seconds=2.0,
    http_workers=2,
    http_connections=8,
    http_warmup_seconds=0.5,
    polls_per_round=40,
    fanout=100,
    publishes_per_round=100,
    memory_publishes=200,
    chat_senders=8,
    sends_per_sender=50,
    chats=20,
    pending=200,
    idle_fetches=50,
    sweep_users=500,
    sweep_entries=1_000_000,
)

QUICK = Config(
    name="quick",
    rounds=3,
    small=20,
    big=10_000,
    http_seconds=1.0,
    http_workers=2,
    http_connections=8,
    http_warmup_seconds=0.3,
    polls_per_round=15,
    fanout=100,
    publishes_per_round=40,
    memory_publishes=150,
    chat_senders=8,
    sends_per_sender=20,
    chats=20,
    pending=200,
    idle_fetches=20,
    sweep_users=200,
    sweep_entries=100_000,
    streams=300,
    press_alerts=50,
    canary_history=10,
    wake_alerts=2_000,
)

# Sizes of 10 and one round: only that every row still produces numbers (tests/test_benchmarks).
TINY = Config(
    name="tiny",
    rounds=1,
    small=5,
    big=10,
    http_seconds=0.2,
    http_workers=1,
    http_connections=2,
    http_warmup_seconds=0.0,
    polls_per_round=2,
    fanout=10,
    publishes_per_round=3,
    memory_publishes=3,
    chat_senders=2,
    sends_per_sender=3,
    chats=2,
    pending=10,
    idle_fetches=2,
    sweep_users=2,
    sweep_entries=10,
    streams=5,
    press_alerts=3,
    followup_alerts=20,
    notice_members=20,
    notice_publish_members=20,
    notice_publishes=3,
    canary_warehouses=10,
    canary_history=2,
    quiet_alerts=20,
    wake_alerts=30,
)

PRESETS = {c.name: c for c in (FULL, QUICK, TINY)}


@dataclass
class Bench:
    """One run: its sizes, the Redis under test (URL and probe)."""

    config: Config
    redis_url: str
    probe: RedisProbe

    def client(self) -> redis.Redis:
        """A plain connection for the baselines (the probe's own calls are not counted)."""
        return redis.Redis.from_url(self.redis_url, socket_timeout=60)

    def log(self, text: str) -> None:
        print(f"  · {text}", flush=True)


def make_users(prefix: str, count: int) -> list[Any]:
    from django.contrib.auth.models import User

    return list(User.objects.bulk_create(User(username=f"{prefix}{i}") for i in range(count)))


def token_for(user: Any) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.get_or_create(user=user)[0].key


def subscribe(warehouse: Any, message_type: Any, users: Iterable[Any] = (), roles=()) -> None:
    from subscriptions.models import Subscription

    Subscription.objects.bulk_create(
        [Subscription(message_type=message_type, warehouse=warehouse, user=u) for u in users]
        + [Subscription(message_type=message_type, warehouse=warehouse, role=r) for r in roles]
    )


def sync_subscriptions() -> None:
    """Mirror the subscriptions into Redis the way operators do (bulk_create sends no signals)."""
    from django.core.management import call_command

    call_command("sync_subscriptions", stdout=io.StringIO())
