"""Sessions from the cache (Redis), backed by their database row: Django's `cached_db` store,
whose read of a session also reads the directory's version in the same Redis round trip.

A browser's request then costs one round trip before its own work (the session and the
version together) and, in steady state, no database query: the session from Redis, its user
from the directory (directory.backends). A poll (directory/held.py) starts from the
session as its process last read it instead, and confirms it, with the version, in the round
trip of its data. See docs/architecture/directory.md, "Sessions", for what the row is kept for.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore
from django.http import HttpRequest

from config.redis import as_text

from . import cache as directory
from . import keys


class SessionStore(CachedDBStore):
    def read_again(self) -> None:
        """Load the session from Redis at its next use: what this process held of it (a
        poll's start, `load`) moved on."""
        self.__dict__.pop("_session_cache", None)  # Django's: load() fills it at first use

    def load(self) -> dict[str, Any]:
        if settings.REDIS_CLUSTER:
            # The cache then lives on another server than the version: two round trips.
            return super().load()
        # The stubs know neither attribute (both are Django's, of cached_db and SessionBase).
        store: Any = self
        client = store._cache.client
        key = keys.session(store._get_or_create_session_key())
        held = directory.held_session(key)
        if held is not None:
            # A poll (directory/held.py): as this process last read it, confirmed with
            # the poll's data before the answer leaves.
            found: dict[str, Any] = client.decode(held)
            return found
        connection = client.get_client(write=False)
        pipe = connection.pipeline(transaction=False)
        pipe.get(key)
        pipe.get(keys.version_key())
        raw, version = pipe.execute()
        directory.seed(None if version is None else as_text(version))
        if raw is None:
            return super().load()  # from the row (and put back in the cache)
        directory.hold_session(key, raw)
        data: dict[str, Any] = client.decode(raw)
        return data


def read_again(request: HttpRequest) -> None:
    """The request's session and the session's user, read afresh (directory/held.py: a poll
    that started from what this process held of them, which moved on). The user is the
    session's (AnonymousUser without one), as Django's `auth.get_user` reads it."""
    session = getattr(request, "session", None)
    if isinstance(session, SessionStore):
        session.read_again()
    request.user = auth.get_user(request)


def preload(session_keys: list[str]) -> dict[str, dict[str, Any]]:
    """The data of these sessions that the cache holds, with the directory's version (seeded
    into the caller's request scope), in one round trip for all: a burst of browsers' event
    streams opening at once. A session left out (not in the cache; on a cluster, all) loads
    as usual when its store is used."""
    if settings.REDIS_CLUSTER or not session_keys:
        return {}
    store: Any = SessionStore()
    client = store._cache.client
    pipe = client.get_client(write=False).pipeline(transaction=False)
    pipe.get(keys.version_key())
    pipe.mget([keys.session(key) for key in session_keys])
    version, raws = pipe.execute()
    directory.seed(None if version is None else as_text(version))
    found = zip(session_keys, raws, strict=True)
    return {key: client.decode(raw) for key, raw in found if raw is not None}
