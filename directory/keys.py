"""The directory's one Redis key. Its name is older than this app and must not change: every
running process reads it."""

from __future__ import annotations

from django.conf import settings


def version_key() -> str:
    """String: a random token, deleted on every change of users, roles, permissions, tokens or
    warehouses and put anew by the next reader."""
    return f"{settings.WMS_REDIS_PREFIX}:directory:version"
