"""Who sends each kind of outbox message: a registry the features fill in `AppConfig.ready()`.

The outbox knows no feature: a feature registers a `Handler` under its kind ("webhook",
"email"), whose `send` makes one attempt and says how it went, and whose `settle` records the
final outcome where the feature keeps it (a run's status, the alert's history). `settle` may run
more than once for one outcome (a worker killed after the outcome was stored runs it again
from the next pass): it must be idempotent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import OutboxMessage


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    RETRY = "retry"  # no answer, a timeout, a 5xx: try again after a back-off
    FAILED = "failed"  # refused for good (a 4xx): no retry


@dataclass(frozen=True)
class Delivery:
    """How one attempt went: `result` what the receiver answered (success), `error` why not."""

    outcome: Outcome
    result: str = ""
    error: str = ""


@dataclass(frozen=True)
class Handler:
    send: Callable[[OutboxMessage], Delivery]
    settle: Callable[[OutboxMessage], None] = lambda message: None
    # Before an operator's retry of a failed message (the admin's button): False refuses it.
    reopen: Callable[[OutboxMessage], bool] = lambda message: True


_handlers: dict[str, Handler] = {}


def register(kind: str, handler: Handler) -> None:
    _handlers[kind] = handler


def handler_of(kind: str) -> Handler | None:
    return _handlers.get(kind)


def kinds() -> list[str]:
    return sorted(_handlers)
