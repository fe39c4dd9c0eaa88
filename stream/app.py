"""GET /api/v1/stream/?warehouse=ID: the Server-Sent Events stream, as a pure ASGI app.

It does not go through Django's middleware or views: Django runs synchronous middleware in a
thread per request, and a stream lasts for hours. Instead it does what they would, briefly:
checks the host, authenticates (session cookie or token, in a worker thread that then closes
its database connection), validates the query, and answers errors as JSON like the REST API.
A token whose user, roles and warehouse this process's directory already holds is let in
without the worker thread: the directory's version, read with the cursor in step 2, must
still be the one that answer came from, else the open takes the usual way.

Then, in this order, so a reconnect loses nothing and repeats nothing:
1. registers with the hub (Redis subscription live) — else 503 + Retry-After;
2. reads the warehouse's current cursor — else 503 (one read for all the streams of the
   warehouse that open at that moment: stream/batched_reads.py);
3. with Last-Event-ID (or ?since=), replays the notifications after it through the inbox
   selector, page after page until a page says it is caught up (`has_more` false: a short or
   empty page alone never means that), the first page before answering, so Redis errors are a
   503; a cursor it cannot replay from (older than the look-back and than everything the
   user's inboxes still hold) gets `event: reset` instead, and the client reloads;
4. sends `event: ready` whose id is the cursor everything up to which has been sent, and
   from then on the live events, dropping any notification at or below that cursor. A stream
   the hub let go before this point (its subscription failed) ends without `ready`: the
   client reconnects from the last id it received, so nothing is skipped.

A stream lasts STREAM_MAX_SECONDS less a random part of up to STREAM_LIFETIME_JITTER of it,
so streams opened together (after a deploy) do not all end, and come back, together.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, MutableMapping
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from config import timestamps
from config.json_renderer import JSONRenderer
from config.redis import REDIS_UNAVAILABLE
from directory import held as held_directory
from directory.snapshot import DirectoryChanged
from notifications import hooks, selectors
from notifications.api.serializers import MAX_CURSOR
from notifications.domain import InboxPage

from . import access, events, sse
from .batched_calls import BatchedCalls
from .bounds import Streams, Writer
from .hub import Closed, Hub, Listener, Unavailable

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

# The hub's own "no Redis" and every Redis error: both answer 503 with Retry-After.
STORE_DOWN: tuple[type[Exception], ...] = (Unavailable, *REDIS_UNAVAILABLE)
# What ends a stream at its periodic re-check: credentials gone, or the directory unreachable.
RECHECK_FAILED: tuple[type[Exception], ...] = (access.AuthenticationFailed, *REDIS_UNAVAILABLE)

# At most this many opens authenticated in one worker-thread call (two queries for all).
IDENTIFY_BATCH = 200

REDIS_DOWN_DETAIL = "The message store is unavailable right now; please retry shortly."


class HttpError(Exception):
    def __init__(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(payload)
        self.status = status
        self.payload = payload
        self.headers = headers or {}


def redis_down() -> HttpError:
    return HttpError(
        HTTPStatus.SERVICE_UNAVAILABLE,
        {"detail": REDIS_DOWN_DETAIL},
        {"Retry-After": str(settings.REDIS_RETRY_AFTER_SECONDS)},
    )


def _cursor(value: str, name: str) -> int:
    try:
        cursor = int(value.strip())
    except ValueError:
        raise HttpError(400, {name: ["A cursor must be an integer."]}) from None
    if not 0 <= cursor <= MAX_CURSOR:
        raise HttpError(400, {name: [f"A cursor must be between 0 and {MAX_CURSOR}."]})
    return cursor


def parse_request(query: dict[str, list[str]], headers: dict[str, str]) -> tuple[int, int | None]:
    """(warehouse id, cursor to replay after or None); HttpError 400 for bad input."""
    values = query.get("warehouse") or [""]
    if not values[0]:
        raise HttpError(
            400, {"warehouse": ["The warehouse parameter (a warehouse id) is required."]}
        )
    try:
        warehouse_id = int(values[0])
    except ValueError:
        raise HttpError(
            400, {"warehouse": ["The warehouse must be a warehouse id (an integer)."]}
        ) from None
    if warehouse_id < 1:
        raise HttpError(404, {"detail": f"Unknown or inactive warehouse {warehouse_id}."})
    # The browser's own reconnect (Last-Event-ID) wins over the since of the original URL.
    if headers.get("last-event-id", "").strip():
        return warehouse_id, _cursor(headers["last-event-id"], "Last-Event-ID")
    since = query.get("since") or [""]
    return warehouse_id, _cursor(since[0], "since") if since[0] else None


class StreamApp:
    """The ASGI app of the stream endpoint (config/asgi.py routes the path to it)."""

    def __init__(self, hub: Hub | None = None, streams: Streams | None = None) -> None:
        self.hub = hub or Hub()
        self.streams = streams or Streams()  # per user, bounded, access re-checked
        # Opens the directory cannot answer yet, authenticated together in a worker thread.
        self._identities: BatchedCalls[tuple[dict[str, str], int | None], access.Identity] = (
            BatchedCalls(_identify_all, limit=IDENTIFY_BATCH)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", [])
        }
        listener: Listener | None = None
        try:
            if scope["method"] != "GET":
                raise HttpError(405, {"detail": f'Method "{scope["method"]}" not allowed.'})
            host, _ = split_domain_port(headers.get("host", ""))
            if not host or not validate_host(host, settings.ALLOWED_HOSTS):
                raise HttpError(400, {"detail": "Invalid host header."})
            # Authentication comes first, as in DRF: a stranger learns nothing about the input.
            try:
                request: tuple[int, int | None] | None = parse_request(
                    parse_qs(scope.get("query_string", b"").decode("latin-1")), headers
                )
                bad_input = None
            except HttpError as exc:
                request, bad_input = None, exc

            async def usual() -> tuple[Any, Listener, int]:
                return await self._admit(headers, request, bad_input)

            async def quick() -> tuple[Any, Listener, int]:
                found = None
                if request is not None and bad_input is None:
                    found = await self._admit_held(headers, request[0])
                return found or await usual()

            admitted = await held_directory.answer_async(quick, again=usual)
            user, listener, position = admitted[0], admitted[1], admitted[2]
            since = request[1] if request is not None else None
            warehouse_id = listener.warehouse_id
            try:
                first = None
                if since is not None:
                    first = await access.run_db(_replay_page, user, warehouse_id, since, True)
            except STORE_DOWN:
                raise redis_down() from None
        except HttpError as exc:
            if listener is not None:
                self.hub.unregister(listener)
            await _answer(send, exc)
            return
        writer = Writer(
            send,
            settings.STREAM_WRITE_TIMEOUT_SECONDS,
            buffer_bytes=settings.STREAM_SEND_BUFFER_BYTES,
        )
        self.streams.admit(listener, headers, writer)
        try:
            await self._stream(receive, writer, headers, user, listener, since, first, position)
        finally:
            self.streams.leave(listener)
            self.hub.unregister(listener)

    @staticmethod
    def _listener(user: Any, warehouse_id: int, role_ids: list[int]) -> Listener:
        return Listener(
            user_id=user.pk,
            warehouse_id=warehouse_id,
            role_ids=role_ids,
            limit=settings.STREAM_QUEUE_LIMIT,
        )

    async def _admit_held(
        self, headers: dict[str, str], warehouse_id: int
    ) -> tuple[Any, Listener, int] | None:
        """The quick way in, when this process's directory holds the token, its user's roles
        and the warehouse: no worker thread, and one round trip that reads the cursor and
        confirms the held snapshot (DirectoryChanged when it moved on: directory/held.py takes
        the usual way). None: not held, take the usual way (nothing was sent)."""
        held = access.held_token_access(headers, warehouse_id)
        if held is None or not held.warehouse_active:
            return None
        listener = self._listener(held.user, warehouse_id, held.role_ids)
        try:
            await self.hub.register(listener, timeout=settings.REDIS_CONNECT_TIMEOUT + 1)
            position, version = await self.hub.cursor_and_directory_version(warehouse_id)
        except STORE_DOWN:
            self.hub.unregister(listener)
            raise redis_down() from None
        try:  # DirectoryChanged: tokens, users, roles or warehouses changed since
            held.snapshot.confirmed_by([version])
        except DirectoryChanged:
            self.hub.unregister(listener)
            raise
        return held.user, listener, position

    async def _admit(
        self,
        headers: dict[str, str],
        request: tuple[int, int | None] | None,
        bad_input: HttpError | None,
    ) -> tuple[Any, Listener, int]:
        """The usual way in: authenticate and read the user's roles and the warehouse in a
        worker thread (the directory fills from the database what it does not hold), then
        register and read the cursor. Errors are HttpErrors, the listener unregistered."""
        try:
            user, role_ids, active = await self._identities.call(
                (headers, request[0] if request else None)
            )
        except access.AuthenticationFailed as exc:
            raise HttpError(403, {"detail": exc.detail}) from None
        except REDIS_UNAVAILABLE:  # the directory's version lives in Redis
            raise redis_down() from None
        if bad_input is not None or request is None:
            raise bad_input or HttpError(400, {})
        warehouse_id = request[0]
        if not active:
            raise HttpError(404, {"detail": f"Unknown or inactive warehouse {warehouse_id}."})
        listener = self._listener(user, warehouse_id, role_ids)
        try:
            await self.hub.register(listener, timeout=settings.REDIS_CONNECT_TIMEOUT + 1)
            position = await self.hub.current_cursor(warehouse_id)
        except STORE_DOWN:
            self.hub.unregister(listener)
            raise redis_down() from None
        return user, listener, position

    async def _stream(
        self,
        receive: Receive,
        writer: Writer,
        headers: dict[str, str],
        user: Any,
        listener: Listener,
        since: int | None,
        first: InboxPage | None,
        position: int,
    ) -> None:
        watcher = asyncio.ensure_future(_watch_disconnect(receive, listener))
        # Every write is time-limited and can be cut short (stream/bounds.py).
        write = writer.write
        try:
            await writer.start(
                [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache, no-transform"),
                    (b"x-accel-buffering", b"no"),  # nginx: pass each event on at once
                ]
            )
            # The retry interval goes out with the first event (one write less per open).
            retry = sse.retry(settings.STREAM_RETRY_MS)
            sent = since or 0
            page = first
            if since is not None and first is not None and not replayable(since, first):
                await write(retry + sse.frame(event="reset", data=b"{}"))
                retry, page = b"", None
            while page is not None and listener.closed is None:
                for item in page.items:
                    data = events.item_data(item)
                    await write(retry + sse.frame(event="notification", data=data, id=item.cursor))
                    retry = b""
                    sent = max(sent, item.cursor)
                if not page.has_more:
                    break
                try:
                    page = await access.run_db(
                        _replay_page, user, listener.warehouse_id, page.next_since
                    )
                except REDIS_UNAVAILABLE:
                    return  # the client reconnects from the last id it received
            if listener.closed is not None:
                # The hub let this stream go (its subscription failed) before it was ready:
                # notifications published since it registered may never reach it, so `ready`
                # must not say they were sent. The client reconnects from the last id it got.
                raise Closed(listener.closed)
            sent = max(sent, position)
            await write(retry + sse.frame(event="ready", data=b'{"cursor":%d}' % sent, id=sent))
            await self._live(write, headers, listener, sent)
        except Closed as closed:
            logger.debug("Stream of user %s ended: %s", listener.user_id, closed.reason)
        finally:
            watcher.cancel()
            await writer.finish()

    async def _live(
        self,
        write: Callable[[bytes], Awaitable[None]],
        headers: dict[str, str],
        listener: Listener,
        sent: int,
    ) -> None:
        heartbeat = settings.STREAM_HEARTBEAT_SECONDS
        ends_at = time.monotonic() + lifetime()
        recheck_at = time.monotonic() + settings.STREAM_RECHECK_SECONDS
        while True:
            now = time.monotonic()
            if now >= ends_at:
                return  # the client reconnects (perhaps to a less busy process) and replays
            if now >= recheck_at:
                # Roles change, sessions end, tokens are revoked: look again now and then.
                try:
                    # With the other streams' re-checks and opens due now: one thread call.
                    _, role_ids, active = await self._identities.call(
                        (headers, listener.warehouse_id)
                    )
                except RECHECK_FAILED:
                    return
                if not active:
                    return
                listener.set_roles(role_ids)
                recheck_at = now + settings.STREAM_RECHECK_SECONDS
            frames = await listener.take(min(heartbeat, ends_at - now, recheck_at - now))
            if not frames:
                await write(sse.KEEP_ALIVE)
                continue
            chunk = []
            for cursor, frame in frames:
                if cursor is not None:
                    if cursor <= sent:  # replayed already, or from before the stream began
                        continue
                    sent = cursor
                chunk.append(frame)
            if chunk:
                await write(b"".join(chunk))


async def _identify_all(
    requests: list[tuple[dict[str, str], int | None]],
) -> list[access.Identity | Exception]:
    return await access.run_db(access.identify_all, list(requests))


def lifetime() -> float:
    """Seconds this stream lasts: STREAM_MAX_SECONDS less a random share of up to
    STREAM_LIFETIME_JITTER of it."""
    jitter = min(max(float(settings.STREAM_LIFETIME_JITTER), 0.0), 1.0)
    return float(settings.STREAM_MAX_SECONDS) * (1.0 - jitter * random.random())  # noqa: S311 (spreading, not secrecy)


def replayable(since: int, first: InboxPage) -> bool:
    """Whether replaying after `since` can tell the client everything (SPEC 11): a cursor
    within the look-back, or not older than what the user's inboxes still hold (the cursor of
    a notification still alive always is). Older than both, notifications after it may have
    been swept: the client must reload instead."""
    if since >= selectors.lookback_since(timestamps.now_ms()):
        return True
    return first.oldest is not None and since >= first.oldest


def _replay_page(user: Any, warehouse_id: int, since: int, first: bool = False) -> InboxPage:
    # Read ones too: a stream tells every change; the client replaces its copy by id. The
    # first page also says what the user's inboxes still hold (can it replay from `since`?).
    page = selectors.inbox_page(
        user=user,
        warehouse_id=warehouse_id,
        since=since,
        limit=settings.NOTIFICATION_PAGE_MAX,
        include_read=True,
        with_oldest=first,
    )
    for type_code in {item.notification.message_type for item in page.items}:
        hooks.actions.of(type_code)  # held from here on, for the loop to serialize (SPEC 14)
    return page


async def _watch_disconnect(receive: Receive, listener: Listener) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            listener.close("disconnected")
            return


async def _answer(send: Send, error: HttpError) -> None:
    body = JSONRenderer().render(error.payload)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in error.headers.items()),
    ]
    await send({"type": "http.response.start", "status": int(error.status), "headers": headers})
    await send({"type": "http.response.body", "body": body})
