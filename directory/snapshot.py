"""One request's view of the directory: a typed, immutable Snapshot, and the request's scope
that holds it.

A request reads the directory's version once (directory.cache.checked) and answers from the
per-process cache loaded at that version. Within `holding()` (a poll, a publish outside a
request) it may start from the version this process already holds, and from the browser's
session as this process last read it, without reading either: the snapshot is then
unconfirmed, and the one Redis batch that reads the request's data (`cache.read_confirmed`) or
writes it (directory/confirmed_writes.py) confirms it. A snapshot is never changed: confirming
one gives a new one, and a snapshot that moved on raises DirectoryChanged.

Where each kind of request confirms what it held: directory/held.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from config.redis import as_text

from .keys import version_key


class DirectoryChanged(Exception):
    """A request answered from a snapshot that Redis no longer holds: nothing it read may be
    used, and it is answered again from a fresh one (directory/held.py)."""


@dataclass(frozen=True, slots=True)
class HeldSession:
    """A browser's session as this process last read it from Redis (its cache key, the
    stored bytes): what a confirmation compares with Redis."""

    key: str
    raw: bytes


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The directory as one request answers from it: the `version` its cache was loaded at,
    the session it holds for this request (only while unconfirmed), and whether Redis
    confirmed the version (read it, or checked it in the same call as the request's data)."""

    version: str
    confirmed: bool = True
    session: HeldSession | None = None

    def reads(self) -> tuple[str, ...]:
        """The keys that confirm it, in this order: the version, then the session's."""
        if self.confirmed:
            return ()
        return (version_key(),) if self.session is None else (version_key(), self.session.key)

    def confirmed_by(self, replies: Sequence[Any]) -> Snapshot:
        """This snapshot confirmed by what `reads()` read (`replies`, in its order); raises
        DirectoryChanged when the version or the session moved on."""
        if self.confirmed:
            return self
        version = replies[0]
        moved = version is None or as_text(version) != self.version
        if self.session is not None:
            moved = moved or replies[1] != self.session.raw
        if moved:
            raise DirectoryChanged(self.version)
        return Snapshot(self.version)


@dataclass(slots=True)
class Scope:
    """One request's place for its snapshot: None until the version is read (or taken as
    held), and whether the request may start from what the process holds (`holding()`)."""

    snapshot: Snapshot | None = None
    may_hold: bool = False


_scope: ContextVar[Scope | None] = ContextVar("directory_scope", default=None)


def current_scope() -> Scope | None:
    """The request's scope, or None outside one (every read of the directory then reads the
    version)."""
    return _scope.get()


def snapshot() -> Snapshot | None:
    """The snapshot the request answers from so far (None: outside a request, or not read)."""
    scope = _scope.get()
    return None if scope is None else scope.snapshot


def within_request() -> bool:
    """Whether a request's scope is open (its version is read once, or already was)."""
    return _scope.get() is not None


@contextmanager
def request_scope() -> Iterator[None]:
    """Read the version at most once within this block (one request)."""
    token = _scope.set(Scope())
    try:
        yield
    finally:
        _scope.reset(token)


@contextmanager
def holding(enabled: bool = True) -> Iterator[None]:
    """Within a request's scope, let the request start from what this process holds (the
    version, the session), unconfirmed. Left without a confirmation (Redis failed it), what
    follows reads afresh. `enabled` False (Redis Cluster) changes nothing."""
    scope = _scope.get()
    if scope is None or not enabled:
        yield
        return
    scope.may_hold = True
    try:
        yield
    finally:
        scope.may_hold = False
        if scope.snapshot is not None and not scope.snapshot.confirmed:
            scope.snapshot = None
