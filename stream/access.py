"""Who is asking, and what they may see: the stream's database reads.

These are plain synchronous functions; the stream runs each one through `run_db`, in a worker
thread that closes its database connection afterwards, so an open stream keeps none.
Authentication is the REST API's: a session cookie (the browser) or `Authorization: Token`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import auth
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import AnonymousUser, User
from django.db import close_old_connections, connections
from django.http import HttpRequest
from django.http.cookie import parse_cookie
from django.utils.functional import Promise
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from directory import cache as directory
from directory import sessions as session_store
from directory.authentication import CachedTokenAuthentication
from messaging.domain import UserRef
from messaging.selectors import user_refs

T = TypeVar("T")

# DRF's own message and msgid (so its catalogue translates it), lazy: in the request's language.
NOT_AUTHENTICATED = gettext_lazy("Authentication credentials were not provided.")


class AuthenticationFailed(Exception):
    """No valid credentials: the answer is 403, as from the REST API."""

    def __init__(self, detail: str | Promise) -> None:
        super().__init__(detail)
        self.detail = detail


def _close_connections(function: Callable[..., T], *args: Any) -> T:
    close_old_connections()
    try:
        return function(*args)
    finally:
        # This worker thread serves other streams next: it must not keep a connection open.
        connections.close_all()


async def run_db(function: Callable[..., T], *args: Any) -> T:
    """Run a database read in a worker thread of the event loop, and close its connection."""
    return await sync_to_async(_close_connections, thread_sensitive=False)(function, *args)


def authenticate(
    headers: Mapping[str, str], sessions: Mapping[str, dict[str, Any]] | None = None
) -> User:
    """The active user the request's token or session belongs to (headers in lower case);
    `sessions`: session data read already (`directory.sessions.preload`), by session key."""
    authorization = headers.get("authorization", "")
    parts = authorization.split()
    if parts and parts[0].lower() == TokenAuthentication.keyword.lower():
        if len(parts) != 2:
            raise AuthenticationFailed("Invalid token header.")
        try:
            user: User
            user, _ = CachedTokenAuthentication().authenticate_credentials(parts[1])
        except exceptions.AuthenticationFailed as exc:
            raise AuthenticationFailed(str(exc.detail)) from None
        return user
    session_key = _session_key(headers)
    if not session_key:
        raise AuthenticationFailed(NOT_AUTHENTICATED)
    # django.contrib.auth.get_user checks the session's auth hash and backend exactly as
    # AuthenticationMiddleware does; it only needs request.session.
    request = HttpRequest()
    store: Any = import_string(f"{settings.SESSION_ENGINE}.SessionStore")(session_key)
    if sessions and session_key in sessions:
        store._session_cache = sessions[session_key]  # Django's: what its own load() fills
    request.session = store
    session_user = auth.get_user(request)
    if isinstance(session_user, AnonymousUser) or not session_user.is_active:
        raise AuthenticationFailed(NOT_AUTHENTICATED)
    return session_user


def held_token_access(headers: Mapping[str, str], warehouse_id: int) -> directory.HeldAccess | None:
    """For a token request, what the directory already holds (no database, no Redis; see
    `directory.cache.held_token_access`); None for a session or when anything is missing."""
    key = _token_key(headers)
    return None if key is None else directory.held_token_access(key, warehouse_id)


def identify(
    headers: Mapping[str, str],
    warehouse_id: int | None,
    sessions: Mapping[str, dict[str, Any]] | None = None,
) -> tuple[User, list[int], bool]:
    """The user, their roles, and whether the warehouse exists and is active: the token, the
    roles and the warehouse from the directory (exact after every change; no database query
    in steady state), a session from the session store."""
    with directory.scope():  # within identify_all's scope: the version read once for all
        user = authenticate(headers, sessions)
        active = warehouse_id is not None and directory.is_active_warehouse(warehouse_id)
        return user, directory.role_ids(user), active


Identity = tuple[User, list[int], bool]


def identify_all(
    requests: list[tuple[Mapping[str, str], int | None]],
) -> list[Identity | Exception]:
    """`identify` for each request (its answer, or the exception it raised), with one read of
    the directory's version and the tokens the directory lacks read in two queries for all:
    the streams of a burst (after a deploy every operator reconnects) come in together."""
    with directory.request_scope():
        sessions = session_store.preload(
            [key for headers, _ in requests if (key := _session_key(headers))]
        )
        directory.hold_tokens([key for headers, _ in requests if (key := _token_key(headers))])
        directory.hold_users([data.get(SESSION_KEY) for data in sessions.values()])
        answers: list[Identity | Exception] = []
        for headers, warehouse_id in requests:
            try:
                answers.append(identify(headers, warehouse_id, sessions))
            except Exception as exc:  # each stream answers its own failure
                answers.append(exc)
        return answers


def _session_key(headers: Mapping[str, str]) -> str | None:
    parts = headers.get("authorization", "").split()
    if parts and parts[0].lower() == TokenAuthentication.keyword.lower():
        return None  # a token request (valid or not), as authenticate decides
    return parse_cookie(headers.get("cookie", "")).get(settings.SESSION_COOKIE_NAME) or None


def _token_key(headers: Mapping[str, str]) -> str | None:
    parts = headers.get("authorization", "").split()
    if len(parts) != 2 or parts[0].lower() != TokenAuthentication.keyword.lower():
        return None
    return parts[1]


def recheck_all(
    streams: list[tuple[Mapping[str, str], int, int]],
) -> list[list[int] | None]:
    """For each open stream (its headers, user id and warehouse id), the user's roles now, or
    None when its access is gone: the token deleted, the user deactivated or deleted, the
    warehouse deactivated. All through the directory (one version read for the lot); a
    session is checked by its user only (its expiry and logout are seen by the stream's own
    periodic check, STREAM_RECHECK_SECONDS)."""
    verdicts: list[list[int] | None] = []
    with directory.request_scope():
        for headers, user_id, warehouse_id in streams:
            parts = headers.get("authorization", "").split()
            if parts and parts[0].lower() == TokenAuthentication.keyword.lower():
                token = directory.token(parts[1]) if len(parts) == 2 else None
                allowed = token is not None and token.user.pk == user_id and token.user.is_active
            else:
                allowed = directory.user_is_active(user_id)
            if allowed and directory.is_active_warehouse(warehouse_id):
                verdicts.append(directory.role_ids(User(pk=user_id)))
            else:
                verdicts.append(None)
    return verdicts


def usernames(user_ids: list[int]) -> dict[int, UserRef]:
    return user_refs(user_ids)
