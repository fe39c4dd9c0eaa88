"""The one retry rule for work answered from the directory this process holds.

A poll, a publish outside a request and a stream open start from the directory as this
process holds it (an unconfirmed Snapshot, directory/snapshot.py) and have the Redis call that
reads or writes their data confirm it:

- a poll: the read model's batch reads the version (and the held session) before the data
  (cache.read_confirmed); an answer that read no data is confirmed on its own
  (cache.confirm_pending) before it leaves (HeldDirectoryMixin below);
- a publish: its script checks the version first and writes nothing when it moved on
  (directory/confirmed_writes.py); outside a request the publish's own retry loop resolves
  again from a fresh directory (notifications/publishing.py), so `answer` is not used for it;
- a stream open: the hub reads the version with the warehouse's cursor (stream/app.py).

When the snapshot moved on (DirectoryChanged), `answer` runs the work's `again` once, from a
fresh directory. `again` repeats what read the directory (who is asking, the selector or the
write), never what counts the request: a throttle, a metric or a middleware runs once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from redis.exceptions import RedisError
from rest_framework.response import Response
from rest_framework.views import APIView

from . import cache as directory
from . import sessions
from .snapshot import DirectoryChanged

T = TypeVar("T")


def answer(attempt: Callable[[], T], *, again: Callable[[], T]) -> T:
    """`attempt()` from the held directory; `again()` from a fresh one when it moved on."""
    try:
        return attempt()
    except DirectoryChanged:
        return again()


async def answer_async(
    attempt: Callable[[], Awaitable[T]], *, again: Callable[[], Awaitable[T]]
) -> T:
    """`answer` for a coroutine (the stream's open)."""
    try:
        return await attempt()
    except DirectoryChanged:
        return await again()


class HeldDirectoryMixin(APIView):
    """For APIViews whose GET reads no more than the directory and Redis, and writes nothing
    a second run could not repeat: a GET answers from the held directory (one round trip in
    steady state), confirmed before its response leaves; when it moved on, who is asking and
    the handler run again (`_answer_again`), within this same dispatch."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method != "GET":
            return super().dispatch(request, *args, **kwargs)
        with directory.holding():
            return super().dispatch(request, *args, **kwargs)

    # DRF's stubs say Response; DRF takes any HttpResponseBase (a 304 here is Django's own).
    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, DirectoryChanged):  # from the data's own batch
            return cast(Response, self._answer_again())
        return super().handle_exception(exc)

    def finalize_response(
        self, request: Any, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        # An answer that read no data (a 404, a 400, a refused token) is confirmed on its own.
        final = answer(lambda: self._confirmed(response), again=self._answer_again)
        return super().finalize_response(request, cast(Response, final), *args, **kwargs)

    @staticmethod
    def _confirmed(response: HttpResponseBase) -> HttpResponseBase:
        try:
            directory.confirm_pending()
        except RedisError as exc:  # could not confirm: answered the usual way
            raise DirectoryChanged from exc
        return response

    def _answer_again(self) -> HttpResponseBase:
        """Who is asking, the permissions and the handler, from a fresh directory and the
        session read from Redis again. Not the throttles, nor anything outside DRF."""
        request: Any = self.request
        directory.read_afresh()
        try:
            sessions.read_again(request._request)
            request._authenticate()  # DRF's own, as its first `request.user` ran it
            self.check_permissions(request)
            handler = getattr(self, request.method.lower())
            response: HttpResponseBase = handler(request, *self.args, **self.kwargs)
        except Exception as exc:
            response = super().handle_exception(exc)
        return response
