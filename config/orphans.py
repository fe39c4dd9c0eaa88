"""What the apps' orphan cleanups share: which rows the database still has, and the body of
the task each app runs when a user is deleted (each app forgets its own Redis data)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any, Protocol

from django.contrib.auth import get_user_model
from django.db.models import Model

logger = logging.getLogger(__name__)

# Ids per database query (SQLite limits the variables of one statement).
QUERY_CHUNK = 500


class Sweep(Protocol):
    """An app's periodic backstop: finds with SCAN what deleted rows left in Redis, removes it,
    and answers a report that prints as one line."""

    def __call__(self, *, batch: int | None = None) -> object: ...


# Added by each app in its AppConfig.ready() (config imports no app), in INSTALLED_APPS order:
# what `manage.py sweep_orphans` runs, by the label it prints.
sweeps: dict[str, Sweep] = {}


def add_sweep(label: str, sweep: Sweep) -> None:
    sweeps[label] = sweep


def existing_ids(model: type[Model], ids: Iterable[int]) -> set[int]:
    """Which of these primary keys the database still has."""
    wanted = sorted(set(ids))
    found: set[int] = set()
    for start in range(0, len(wanted), QUERY_CHUNK):
        chunk = wanted[start : start + QUERY_CHUNK]
        found.update(model._default_manager.filter(pk__in=chunk).values_list("pk", flat=True))
    return found


def forget_deleted_user(user_id: int, forget: Callable[[int], Any], what: str) -> dict[str, int]:
    """Run `forget(user_id)` (an app's cleanup, returning a dataclass report) unless the user
    exists after all (a task queued by a delete that was rolled back): then nothing is done."""
    if existing_ids(get_user_model(), [user_id]):
        return {}
    report = forget(user_id)
    logger.info("%s of deleted user %d: %s", what, user_id, report)
    return asdict(report)
