"""Polls answered from the directory this process holds, confirmed in their data's round trip.

A poll used to read the directory's version (with a token) or the session and the version
(with a browser's cookie) before anything else (one round trip), then its data (another). A
view with this mixin answers a GET from the version, and the session, as the process already
holds them (directory.cache.optimistic), and reads them from Redis together with its data; if
one has moved on, what was read is dropped and the request is answered again the usual way.
So a steady poll costs one round trip, and a change of users, roles, tokens or warehouses, a
sign-out or a new password still counts at the very next request.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from redis.exceptions import RedisError

from . import cache as directory


def _unused(request: HttpRequest) -> HttpResponse:
    raise AssertionError("only their process_request is used")


_SESSIONS = SessionMiddleware(_unused)
_USERS = AuthenticationMiddleware(_unused)


class OptimisticDirectoryMixin:
    """For APIViews whose GET reads no more than the directory and Redis, and writes nothing
    a second run could not repeat."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        run = super().dispatch  # type: ignore[misc]
        if request.method != "GET":
            response: HttpResponseBase = run(request, *args, **kwargs)
            return response
        # DRF writes the user it authenticates onto the request (and session authentication
        # would take it from there): a second run starts from the request as it came.
        arrived = dict(request.__dict__)
        try:
            with directory.optimistic():
                response = run(request, *args, **kwargs)
                # An answer that read no data (a 404, a 400, a refused token) is confirmed
                # on its own before it leaves.
                directory.confirm_pending()
            return response
        except (directory.DirectoryChanged, RedisError):
            # Redis errors here come from confirm_pending alone (the view turns its own into
            # 503s): the usual way answers them as it always does.
            request.__dict__.clear()
            request.__dict__.update(arrived)
            # The session and the user the first run loaded live in objects the middleware
            # put on the request: new ones, as the middleware makes them, read afresh.
            _SESSIONS.process_request(request)
            _USERS.process_request(request)
            response = run(request, *args, **kwargs)
            return response
