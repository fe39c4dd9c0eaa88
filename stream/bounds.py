"""What bounds the open streams of a process (SPEC section 11): a time limit on each write, at
most STREAM_MAX_PER_USER streams per user, and access that is re-checked as soon as it changes.

- **Writes.** A client that reads nothing fills the socket's buffers, and then the server's
  `send` waits for ever: no event queued for that stream could reach it, and its memory would
  stay. Every write of a stream goes through its `Writer`, which gives up after
  STREAM_WRITE_TIMEOUT_SECONDS and ends the stream; so can anyone else (`abort`), even while
  the write is blocked. The response is then left unfinished, which makes the ASGI server close
  the connection (uvicorn logs "ASGI callable returned without completing response").
  "Reads nothing" needs the buffers bounded: on loopback the kernel would absorb megabytes
  for a client that never reads, and no write would block. So each stream's socket gets a
  send buffer of STREAM_SEND_BUFFER_BYTES and its transport pauses at that much waiting
  (`bound_buffers`): what a non-reading client can leave unread is about that and its own
  receive buffer, after which the next write blocks and the time limit runs.
- **Per user.** `Streams.admit` registers a stream under its user; one more than
  STREAM_MAX_PER_USER ends that user's oldest stream in this process.
- **Access.** Every STREAM_ACCESS_CHECK_SECONDS the process reads the directory's version
  (one GET); when it changed (a token deleted, a user deactivated, a permission, role or
  warehouse changed), every open stream's credentials, roles and warehouse are checked again
  through the directory: a stream whose access is gone ends, one whose roles changed is
  narrowed (or widened) at once. So a revocation reaches open streams within a few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from config.redis import REDIS_UNAVAILABLE, as_text
from config.redis_async import async_redis
from directory.keys import version_key

from . import access
from .hub import Closed, Listener, stop

logger = logging.getLogger(__name__)

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Aborted(Closed):
    """The stream was ended while writing, or its write took too long: its response is left
    unfinished (the server closes the connection)."""


def bound_buffers(send: Send, size: int) -> bool:
    """Give the connection behind `send` a send buffer of `size` bytes, and make its transport
    pause writes (the server's `send` waits) beyond `size` bytes queued. False when the server
    does not show its transport (an ASGI server other than uvicorn): its buffers stay as the
    system makes them.

    uvicorn keeps the connection's transport on the object whose method `send` is; ASGI itself
    offers no way to the socket.
    """
    transport: Any = getattr(getattr(send, "__self__", None), "transport", None)
    # asyncio's and uvloop's transports alike (uvloop's are not asyncio subclasses).
    if not hasattr(transport, "get_extra_info") or not hasattr(
        transport, "set_write_buffer_limits"
    ):
        return False
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
    except OSError:
        logger.debug("Stream: could not bound the socket's send buffer", exc_info=True)
        return False
    transport.set_write_buffer_limits(high=size)
    return True


class Writer:
    """Writes one stream's response, each write within `timeout` seconds.

    Made in the task that serves the stream; `abort` (from anywhere in the event loop) ends
    the stream, cancelling a write that is blocked on a client that does not read.
    """

    def __init__(self, send: Send, timeout: float, *, buffer_bytes: int | None = None) -> None:
        if buffer_bytes:
            bound_buffers(send, buffer_bytes)
        self._send = send
        self._timeout = timeout
        self._task = asyncio.current_task()
        self._writing = False
        self.aborted: str | None = None

    async def start(self, headers: list[tuple[bytes, bytes]]) -> None:
        await self._bounded({"type": "http.response.start", "status": 200, "headers": headers})

    async def write(self, chunk: bytes) -> None:
        await self._bounded({"type": "http.response.body", "body": chunk, "more_body": True})

    async def finish(self) -> None:
        """End the response properly, unless it was aborted (or cannot be ended in time)."""
        if self.aborted is None:
            with contextlib.suppress(Aborted):
                await self._bounded({"type": "http.response.body", "body": b"", "more_body": False})

    @property
    def writing(self) -> bool:
        return self._writing

    def abort(self, reason: str) -> None:
        if self.aborted is not None:
            return
        self.aborted = reason
        if self._writing and self._task is not None:
            self._task.cancel()

    async def _bounded(self, message: MutableMapping[str, Any]) -> None:
        if self.aborted is not None:
            raise Aborted(self.aborted)
        timer = asyncio.get_running_loop().call_later(self._timeout, self.abort, "write-timeout")
        self._writing = True
        try:
            await self._send(message)
        except asyncio.CancelledError:
            if self.aborted is None or self._task is None:
                raise  # not ours: the server is shutting down
            self._task.uncancel()
            raise Aborted(self.aborted) from None
        finally:
            self._writing = False
            timer.cancel()


@dataclass(eq=False)
class OpenStream:
    listener: Listener
    writer: Writer
    headers: Mapping[str, str]

    def end(self, reason: str) -> None:
        """End the stream: a stream waiting for events ends its response properly, one blocked
        in a write (a client that does not read) is cut off."""
        self.listener.close(reason)
        if self.writer.writing:
            self.writer.abort(reason)


class Streams:
    """The open streams of one process by user, oldest first, and the task that re-checks
    their access when the directory changes."""

    # Swapped by tests; builds the redis.asyncio client that reads the directory version.
    client_factory: Callable[..., Redis | RedisCluster] = staticmethod(async_redis)

    def __init__(self) -> None:
        self._by_user: dict[int, dict[Listener, OpenStream]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watcher: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return sum(len(streams) for streams in self._by_user.values())

    def of_user(self, user_id: int) -> list[Listener]:
        return list(self._by_user.get(user_id, {}))

    def open_of(self, user_id: int) -> list[OpenStream]:
        return list(self._by_user.get(user_id, {}).values())

    def admit(self, listener: Listener, headers: Mapping[str, str], writer: Writer) -> None:
        """Count the stream under its user; ends that user's oldest ones past the limit."""
        self._watch()
        mine = self._by_user.setdefault(listener.user_id, {})
        mine[listener] = OpenStream(listener, writer, headers)
        while len(mine) > max(1, settings.STREAM_MAX_PER_USER):
            oldest = next(iter(mine))
            mine.pop(oldest).end("replaced")

    def leave(self, listener: Listener) -> None:
        mine = self._by_user.get(listener.user_id)
        if mine is not None:
            mine.pop(listener, None)
            if not mine:
                del self._by_user[listener.user_id]

    async def recheck(self) -> None:
        """Check every open stream's access again now (through the directory)."""
        streams = [stream for mine in self._by_user.values() for stream in mine.values()]
        if not streams:
            return
        try:
            verdicts = await access.run_db(
                access.recheck_all,
                [(s.headers, s.listener.user_id, s.listener.warehouse_id) for s in streams],
            )
        except REDIS_UNAVAILABLE:
            return  # the hub ends the streams itself when Redis goes away
        for stream, roles in zip(streams, verdicts, strict=True):
            if roles is None:
                self.leave(stream.listener)
                stream.end("revoked")
            else:
                stream.listener.set_roles(roles)

    async def aclose(self) -> None:
        """Stop the access watcher (server shutdown; the hub ends the streams)."""
        if self._watcher is not None:
            await stop(self._watcher)
            self._watcher = None

    def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new server (tests): the old loop's task is gone
            self._loop, self._watcher = loop, None
        if self._watcher is None or self._watcher.done():
            self._watcher = loop.create_task(self._run(), name="stream-access")

    async def _run(self) -> None:
        # It lives as long as the event loop: a watcher started with a stream would read its
        # first version only after that stream's check, and miss a change made in between.
        client = self.client_factory()
        try:
            last: str | None = await self._version(client)
            try:
                await self.recheck()  # the streams admitted before this first read
            except DatabaseError:
                logger.warning("Stream access re-check failed; retrying", exc_info=True)
                last = None  # unseen: the next tick checks again
            while True:
                await asyncio.sleep(settings.STREAM_ACCESS_CHECK_SECONDS)
                if not self._by_user:
                    continue
                try:
                    version = await self._version(client)
                except REDIS_UNAVAILABLE:
                    continue  # the hub ends the streams itself when Redis goes away
                if version != last:
                    try:
                        await self.recheck()
                    except DatabaseError:
                        # A busy database (SQLite's "table is locked") must not end revocation:
                        # the version stays unseen, so the next tick checks again.
                        logger.warning("Stream access re-check failed; retrying", exc_info=True)
                        continue
                    last = version
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("Stream access watcher failed; it restarts with the next stream")
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()

    @staticmethod
    async def _version(client: Redis | RedisCluster) -> str:
        """The directory's version, put anew (as its readers do) when a change deleted it."""
        value = await client.get(version_key())
        if value is None:
            await client.set(version_key(), uuid.uuid4().hex, nx=True)
            value = await client.get(version_key())
        return "" if value is None else as_text(value)
