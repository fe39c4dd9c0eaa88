"""The directory's Redis keys: its version (a name older than this app, which must not change:
every running process reads it) and the browser sessions' cache entries."""

from __future__ import annotations

from django.conf import settings


def version_key() -> str:
    """String: a random token, deleted on every change of users, roles, permissions, tokens or
    warehouses and put anew by the next reader."""
    return f"{settings.WMS_REDIS_PREFIX}:directory:version"


def session(session_key: str) -> str:
    """String: a session's data in the cache (the name Django's `cached_db` store gives it)."""
    from django.contrib.sessions.backends.cached_db import KEY_PREFIX
    from django.core.cache import caches

    return caches[settings.SESSION_CACHE_ALIAS].make_key(KEY_PREFIX + session_key)
