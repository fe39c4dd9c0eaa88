"""Who is asking, without the database on every poll: API tokens, users, their roles and the
active warehouses, from a per-process cache that is exact.

Every change of a user, a group, a membership, a token or a warehouse deletes a version token
in Redis (right away and again after the transaction commits, so no process keeps what a not
yet committed change showed); the next reader puts a new random one (SET NX). Each request
reads the version once (one GET, no database) and a process that sees a new one drops
everything it cached; so a role or token change is seen at the very next request. A cache
older than `MAX_AGE_SECONDS` is dropped too, in case a change was made past the ORM
(`QuerySet.update`, raw SQL) or its version write failed.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.http import HttpRequest, HttpResponse

from config.redis import as_text, get_redis

MAX_AGE_SECONDS = 300.0

# Per request: the version read at its start (None outside a request: every call reads it).
_request_version: ContextVar[dict[str, str] | None] = ContextVar("directory_version", default=None)


def version_key() -> str:
    """String: a random token, deleted on every change of users, roles, tokens or warehouses
    and put anew by the next reader."""
    return f"{settings.WMS_REDIS_PREFIX}:directory:version"


def bump() -> None:
    """A change was made: every process drops its cache at its next request."""
    get_redis().delete(version_key())


def _read_version() -> str:
    client = get_redis()
    value = client.get(version_key())
    if value is None:  # a fresh (or emptied) Redis: any token will do, as long as it is new
        client.set(version_key(), uuid.uuid4().hex, nx=True)
        value = client.get(version_key())
    return "" if value is None else as_text(value)


class _Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.version = ""
        self.loaded_at = 0.0
        self.tokens: dict[str, Any] = {}  # token key -> Token (with its user)
        self.roles: dict[int, tuple[int, ...]] = {}
        self.warehouses: dict[int, Any] | None = None  # active warehouses by id

    def sync(self, version: str) -> None:
        now = time.monotonic()
        if version == self.version and now - self.loaded_at < MAX_AGE_SECONDS:
            return
        with self._lock:
            self.version, self.loaded_at = version, now
            self.tokens, self.roles, self.warehouses = {}, {}, None


_cache = _Cache()


def checked() -> _Cache:
    """The cache, once the version has been read (once per request, every call elsewhere)."""
    scope = _request_version.get()
    if scope is not None and "version" in scope:
        return _cache
    version = _read_version()
    _cache.sync(version)
    if scope is not None:
        scope["version"] = version
    return _cache


def token(key: str) -> Any | None:
    """The DRF Token with its user, or None for an unknown key."""
    from rest_framework.authtoken.models import Token

    cache = checked()
    found = cache.tokens.get(key)
    if found is None:
        found = Token.objects.select_related("user").filter(key=key).first()
        if found is None:
            return None
        cache.tokens[key] = found
    return found


def role_ids(user: AbstractBaseUser) -> list[int]:
    """The user's roles (groups), as of this request."""
    cache = checked()
    found = cache.roles.get(user.pk)
    if found is None:
        found = tuple(user.groups.values_list("id", flat=True))  # type: ignore[attr-defined]
        cache.roles[user.pk] = found
    return list(found)


def active_warehouse(warehouse_id: int) -> Any | None:
    """The active warehouse with this id, or None."""
    from subscriptions.models import Warehouse

    cache = checked()
    if cache.warehouses is None:
        cache.warehouses = {w.pk: w for w in Warehouse.objects.filter(is_active=True)}
    return cache.warehouses.get(int(warehouse_id))


@contextmanager
def request_scope() -> Iterator[None]:
    """Read the version at most once within this block (one request)."""
    token = _request_version.set({})
    try:
        yield
    finally:
        _request_version.reset(token)


class DirectoryMiddleware:
    """Each request reads the directory version at most once."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with request_scope():
            return self.get_response(request)


def _changed(sender: Any, using: str = "default", **kwargs: Any) -> None:
    bump()
    transaction.on_commit(bump, using=using)


def connect() -> None:
    """Replace the version on every change the cache depends on (called once, at start-up)."""
    from rest_framework.authtoken.models import Token

    from subscriptions.models import Warehouse

    user_model = get_user_model()
    for model in (user_model, Group, Token, Warehouse):
        post_save.connect(_changed, sender=model, dispatch_uid=f"directory-save-{model.__name__}")
        post_delete.connect(
            _changed, sender=model, dispatch_uid=f"directory-delete-{model.__name__}"
        )
    m2m_changed.connect(
        _changed, sender=user_model.groups.through, dispatch_uid="directory-user-groups"
    )
