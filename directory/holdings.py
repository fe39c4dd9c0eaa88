"""What a request reads from a per-process copy is declared here, once: the one way to hold
state.

A feature that keeps something per process (the alert actions by message type, the shift
schedule) declares a `Holding`: its name, the models it is built from, and how to load it.
The declaration is all it does:

- every save and delete of those models, and every change of their many-to-many tables, in any
  process (the admin, the API, `manage.py shell`, a data import), replaces the directory's
  version in Redis, right away and again after the transaction commits. The receivers are
  connected here, strongly, once per model, whoever declares it;
- the product's own bulk writes of those models (`QuerySet.update`, `bulk_create`,
  `bulk_update`) do the same: the product's models use `config.bulk_writes.AnnouncingManager`,
  which sends `bulk_written` (`tests/directory/test_holdings.py` fails for a watched model of
  the product's own apps that does not);
- `get()` answers from the copy loaded at the request's version: read from the database once
  per version and process, and dropped with the rest of the directory's cache when the version
  moves on (directory/cache.py). `now()` answers from what is held, reading nothing, for the
  stream's loop, which re-reads the version every STREAM_ACCESS_CHECK_SECONDS.

So every process honours a change at its next request, and a new held thing is covered by the
cross-process test that is generated from these declarations.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.apps import apps
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

from config.bulk_writes import bulk_written

from . import cache

T = TypeVar("T")

_lock = threading.Lock()
_holdings: dict[str, Holding[Any]] = {}
_watched: dict[str, set[str]] = {}  # model label -> names of the holdings built from it


@dataclass(eq=False)
class Holding(Generic[T]):
    """One thing held per process: `load()`'s value (immutable: requests share it; never None,
    which reads as "not held": say "none" another way, as delivery/canary.py does), built from
    the rows of `models` ("app_label.ModelName", many-to-many tables included, e.g.
    "auth.User_groups")."""

    name: str
    models: tuple[str, ...]
    load: Callable[[], T] | None = None
    loads: int = field(default=0, init=False)  # how many times this process loaded it

    def get(self) -> T:
        """The value as of the request's version of the directory."""
        if self.load is None:
            raise TypeError(f"{self.name} is held by the directory's own cache")
        found: T = cache.held(self.name, self._load)
        return found

    def now(self) -> T | None:
        """What this process holds now, reading nothing (no Redis, no database); None when it
        holds nothing (never loaded here, or dropped by a change since)."""
        found: T | None = cache.held_now(self.name)
        return found

    def forget(self) -> None:
        """Drop this process's copy (tests)."""
        cache.forget_held(self.name)

    def _load(self) -> T:
        if self.load is None:
            raise TypeError(f"{self.name} is held by the directory's own cache")
        self.loads += 1
        return self.load()


def declare(name: str, *, models: Iterable[str], load: Callable[[], T] | None = None) -> Holding[T]:
    """Declare what a request reads from a per-process copy, and the models it is built from.
    `load` None: the directory's own cache holds it (tokens, users, roles)."""
    holding: Holding[T] = Holding(name, tuple(models), load)
    with _lock:
        if name in _holdings:
            raise ValueError(f"a holding named {name!r} is declared already")
        _holdings[name] = holding
        for label in holding.models:
            first = label not in _watched
            _watched.setdefault(label, set()).add(name)
            if first:
                _connect(label)
    return holding


def declared() -> tuple[Holding[Any], ...]:
    """Every holding, in the order they were declared."""
    return tuple(_holdings.values())


def watched_models() -> dict[str, frozenset[str]]:
    """Each watched model's label, with the names of the holdings built from it."""
    return {label: frozenset(names) for label, names in _watched.items()}


def changed(using: str = "default") -> None:
    """A watched change: replace the directory's version now and again after the transaction
    commits (so no process keeps what a not yet committed change showed)."""
    cache.bump()
    transaction.on_commit(cache.bump, using=using)


def _on_change(sender: Any, using: str = "default", **kwargs: Any) -> None:
    changed(using)


def _on_save(sender: Any, update_fields: Any = None, using: str = "default", **kwargs: Any) -> None:
    # A sign-in saves only last_login: nothing a holding decides on. Not bumping for it keeps
    # every sign-in from making every process refill its cache and re-check its streams.
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    changed(using)


def _connect(label: str) -> None:
    """Connect the receivers for one model, strongly (a weak reference to a receiver defined
    inside a function is dropped when the function returns, and saves would bump nothing).
    A many-to-many table ("auth.User_groups") sends m2m_changed, a model the other two."""
    uid = f"holdings-{label}"
    post_save.connect(_on_save, sender=label, weak=False, dispatch_uid=f"{uid}-save")
    post_delete.connect(_on_change, sender=label, weak=False, dispatch_uid=f"{uid}-delete")
    m2m_changed.connect(_on_change, sender=label, weak=False, dispatch_uid=f"{uid}-m2m")
    if "." in label:  # bulk_written is a plain Signal: it takes the model, not its label
        apps.lazy_model_operation(_connect_bulk, tuple(label.lower().split(".", 1)))


def _connect_bulk(model: Any) -> None:
    bulk_written.connect(
        _on_change, sender=model, weak=False, dispatch_uid=f"holdings-{model._meta.label}-bulk"
    )
