"""One Redis pub/sub subscription per process, fanned out in memory to the open streams.

The hub PSUBSCRIBEs to every warehouse's and every chat's events channel on one connection.
For each message it finds the local streams it concerns (by warehouse and inbox, or by chat
member), makes one Redis round trip for what they need (the content at the cursor and each
user's read mark), serializes once per variant and queues the frame on each stream. Messages
are handled one at a time, in the order Redis sent them, so every stream receives its
notifications in cursor order.

A stream that does not keep up (STREAM_QUEUE_LIMIT frames waiting) is closed rather than
buffered without bound; so is every stream when the subscription fails, and every stream
of an event whose notification cannot be read or shown (the others, and the subscription, go
on). Whether an event is read for each user is the read model's one rule (read_by in
notifications/readmodel/lua/read_model/), the same the polls apply. Their clients
reconnect with Last-Event-ID and replay what they missed. On a Redis Cluster the hub then
subscribes on another live node (PUBLISH reaches every node), so losing any one node, the first
of REDIS_URL included, does not end instant delivery; /healthz says "subscription" while the
process has none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from config import metrics, status, timestamps
from config.redis import REDIS_UNAVAILABLE, as_text
from config.redis_async import async_redis, cluster_nodes
from delivery import canary as delivery_canary
from delivery import metrics as delivery_metrics
from delivery import store as delivery_store
from delivery.selectors import STREAM_SERVED_WITHIN_MS
from directory import keys as directory_keys
from messaging import keys as chat_keys
from messaging.domain import UserRef
from notifications import hooks as notification_hooks
from notifications import keys as notification_keys
from notifications import store as notification_store
from notifications.domain import InboxItem, Lifecycle, Notification

from . import access, events, sse
from .batched_reads import BatchedReads

logger = logging.getLogger(__name__)

# The name of this process's pub/sub in /healthz (config.status).
SUBSCRIPTION = "subscription"

# How long a sender's username is reused before it is read again.
USERNAME_TTL_SECONDS = 300.0


class Closed(Exception):
    """The stream must end (the reason: "redis", "slow", "shutdown", "error")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Unavailable(Exception):
    """The subscription is not running (Redis unreachable): new streams get 503."""


def inboxes_of(user_id: int, role_ids: Iterable[int]) -> frozenset[str]:
    """The inboxes a user sees in a warehouse: their own and their roles' (SPEC section 2)."""
    return frozenset({f"u:{int(user_id)}", *(f"r:{int(r)}" for r in role_ids)})


class Listener:
    """One open stream as the hub sees it: whose it is, and the frames waiting to be written."""

    def __init__(
        self, *, user_id: int, warehouse_id: int, role_ids: Iterable[int], limit: int
    ) -> None:
        self.user_id = int(user_id)
        self.warehouse_id = int(warehouse_id)
        self.inboxes = inboxes_of(user_id, role_ids)
        self.closed: str | None = None
        self._limit = limit
        self._frames: deque[tuple[int | None, bytes]] = deque()
        # A bare future rather than an Event and wait_for: a thousand streams wake per event,
        # and wait_for would make a task for each of them each time.
        self._waiter: asyncio.Future[None] | None = None

    def set_roles(self, role_ids: Iterable[int]) -> None:
        self.inboxes = inboxes_of(self.user_id, role_ids)

    def sees(self, inboxes: frozenset[str]) -> bool:
        return not self.inboxes.isdisjoint(inboxes)

    def offer(self, cursor: int | None, frame: bytes) -> None:
        """Queue a frame (cursor None: not a notification). A full queue closes the stream."""
        if self.closed is not None:
            return
        if len(self._frames) >= self._limit:
            self._frames.clear()
            self.close("slow")
            return
        self._frames.append((cursor, frame))
        self._wake()

    def close(self, reason: str) -> None:
        if self.closed is None:
            self.closed = reason
            self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def take(self, timeout: float) -> list[tuple[int | None, bytes]]:
        """The frames waiting, after waiting up to `timeout` for one; raises Closed."""
        if not self._frames and self.closed is None:
            loop = asyncio.get_running_loop()
            self._waiter = loop.create_future()
            timer = loop.call_later(max(0.0, timeout), self._wake)
            try:
                await self._waiter
            finally:
                timer.cancel()
                self._waiter = None
        if self.closed is not None:
            raise Closed(self.closed)
        frames = list(self._frames)
        self._frames.clear()
        return frames


class Hub:
    """The process's subscription and its index of open streams (one per event loop)."""

    # Swapped by tests and benchmarks; builds the redis.asyncio clients.
    client_factory: Callable[..., Redis | RedisCluster] = staticmethod(async_redis)

    def __init__(self) -> None:
        self._by_warehouse: dict[int, set[Listener]] = defaultdict(set)
        self._by_user: dict[int, set[Listener]] = defaultdict(set)
        self._names: dict[int, tuple[float, UserRef]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        # Made anew for each event loop (_start); an Event binds to its loop on first use.
        self._ready = asyncio.Event()
        self._retry_now = asyncio.Event()
        self._data: Redis | RedisCluster | None = None
        self._data_lock = asyncio.Lock()
        self._event_script: Any = None
        self._arrive_script: Any = None
        self._beaten_at = 0.0  # when this process last said it serves streams (monotonic)
        self._opening_reads = BatchedReads(self._read_cursor_and_directory_version)
        # Cluster nodes whose subscription failed, tried again after the others.
        self._failed_nodes: set[tuple[str, int] | None] = set()

    # --- Streams come and go ---------------------------------------------------------------

    async def register(self, listener: Listener, *, timeout: float) -> None:
        """Start delivering to `listener` once the subscription is live; raises Unavailable.

        Anything published after this returns reaches the listener (or closes it), which is
        what lets a stream replay from Redis afterwards without a gap.
        """
        ready = self._start()
        if not ready.is_set():  # the usual case skips the timer and task of wait_for
            self._retry_now.set()  # someone is waiting: retry a lost subscription now
            try:
                await asyncio.wait_for(ready.wait(), timeout)
            except TimeoutError:
                raise Unavailable from None
        self._by_warehouse[listener.warehouse_id].add(listener)
        self._by_user[listener.user_id].add(listener)

    def unregister(self, listener: Listener) -> None:
        for index, key in (
            (self._by_warehouse, listener.warehouse_id),
            (self._by_user, listener.user_id),
        ):
            group = index.get(key)
            if group is not None:
                group.discard(listener)
                if not group:
                    del index[key]

    @property
    def streams(self) -> int:
        return sum(len(group) for group in self._by_warehouse.values())

    async def current_cursor(self, warehouse_id: int) -> int:
        """The warehouse's last cursor given out (0 if none): where "from now" starts.

        Raises Unavailable for any failure of the Redis client (a 503 for the stream): on a
        cluster in failover redis.asyncio also fails with errors outside RedisError.
        """
        cursor, _ = await self.cursor_and_directory_version(warehouse_id)
        return cursor

    async def cursor_and_directory_version(self, warehouse_id: int) -> tuple[int, str | None]:
        """The warehouse's current cursor (as `current_cursor`) and the directory's version
        (None if there is none), read after this call began, in one round trip shared with
        the streams of the warehouse that open at the same moment (stream/batched_reads.py).
        A stream that identified its user from what the directory held confirms with the
        version that it still holds."""
        return await self._opening_reads.get(warehouse_id)

    async def _read_cursor_and_directory_version(self, warehouse_id: int) -> tuple[int, str | None]:
        try:
            client = await self._data_client()
            pipe = client.pipeline(transaction=False)  # two slots on a cluster: no MULTI
            pipe.get(notification_keys.sequence(warehouse_id))
            pipe.get(directory_keys.version_key())
            cursor, version = await pipe.execute()
        except Exception as exc:
            logger.warning("Stream hub could not read a cursor: %r", exc)
            if not isinstance(exc, REDIS_UNAVAILABLE):
                await self._drop_data_client()  # it may be left broken: the next call starts anew
            raise Unavailable from exc
        return int(cursor or 0), None if version is None else as_text(version)

    async def aclose(self) -> None:
        """Stop the subscription and end every stream (server shutdown)."""
        self._close_all("shutdown")
        status.clear(SUBSCRIPTION)  # none is wanted any more
        if self._task is not None:
            await stop(self._task)
            self._task = None
        await self._drop_data_client()

    # --- The subscription ------------------------------------------------------------------

    def _start(self) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new server (tests): clients of an old loop are unusable
            self._loop, self._task, self._data = loop, None, None
            self._event_script = None
            self._opening_reads = BatchedReads(self._read_cursor_and_directory_version)
            self._data_lock = asyncio.Lock()
            self._ready = asyncio.Event()
            self._retry_now = asyncio.Event()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="stream-hub")
        return self._ready

    async def _data_client(self) -> Redis | RedisCluster:
        """The data client, its cluster map loaded once before first use: redis.asyncio's
        RedisCluster, called by many streams at once before it has a map, loses calls to
        connections it closes while loading it (RuntimeError, AttributeError, not RedisError)."""
        if self._data is None:
            self._data = self.client_factory()
        client = self._data
        if isinstance(client, RedisCluster):
            async with self._data_lock:
                await client.initialize()
        return client

    async def _drop_data_client(self) -> None:
        # Callers still holding the old one get errors (a 503 for them); new ones a new client.
        client, self._data = self._data, None
        self._event_script = self._arrive_script = None
        if client is not None:
            await _quietly(client.aclose())

    async def _event_view(
        self,
        warehouse_id: int,
        notification_id: str,
        now: int,
        users: dict[int, frozenset[str]],
        *,
        tell: bool = False,
    ) -> notification_store.EventView | None:
        """The notification of an event, whom of `users` (each with the inboxes they see) it is
        read for and whom it came quietly to (the read model's one rule, in
        notifications/readmodel/lua/event_read_state.lua); `tell`: also whom of them to tell
        loudly (read_model/ to_tell). One round trip."""
        client = await self._data_client()
        if self._event_script is None:
            self._event_script = client.register_script(notification_store.EVENT_READ_STATE.source)
        keys, args = notification_store.event_read_state_call(
            warehouse_id,
            notification_id,
            now,
            list(users.items()),
            budget=settings.NOISE_BUDGET_PER_HOUR,
            tell=tell,
        )
        reply = await self._event_script(keys=keys, args=args, client=client)
        return notification_store.event_view(reply, list(users))

    async def _run(self) -> None:
        delay = 0.1
        patterns = (
            notification_keys.events_channel_pattern(),
            chat_keys.events_channel_pattern(),
        )
        while True:
            node = await self._subscription_node()
            client = self.client_factory(pubsub=True, **({"node": node} if node else {}))
            pubsub = client.pubsub()
            where = f"{node[0]}:{node[1]}" if node else "redis"
            try:
                await pubsub.psubscribe(*patterns)
                # Ready only once Redis has confirmed both patterns: from then on no publish
                # can be missed.
                confirmed = 0
                while confirmed < len(patterns):
                    message = await pubsub.get_message(timeout=settings.REDIS_CONNECT_TIMEOUT)
                    if message is None:
                        raise TimeoutError("Redis did not confirm the subscription")
                    confirmed += message["type"] == "psubscribe"
                self._ready.set()
                self._failed_nodes.discard(node)
                status.clear(SUBSCRIPTION)
                metrics.STREAM_SUBSCRIPTIONS.labels("subscribed").inc()
                logger.info("Stream hub subscribed to %s on %s", ", ".join(patterns), where)
                delay = 0.1
                while True:
                    await self._beat()
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5)
                    if message is not None and message["type"] == "pmessage":
                        await self._dispatch(message["channel"], message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("Stream hub lost its Redis subscription on %s: %r", where, exc)
                self._failed_nodes.add(node)
                status.flag(SUBSCRIPTION, f"no live subscription (last on {where}: {exc!r:.200})")
                metrics.STREAM_SUBSCRIPTIONS.labels("lost").inc()
            finally:
                self._ready.clear()
                self._close_all("redis")
                await _quietly(pubsub.aclose())
                await _quietly(client.aclose())
                await self._drop_data_client()
            # Back off while Redis stays away, but a stream trying to start cuts the wait short.
            self._retry_now.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._retry_now.wait(), delay)
            delay = min(delay * 2, 2.0)

    async def _subscription_node(self) -> tuple[str, int] | None:
        """Where to subscribe: None on one Redis; on a cluster, a node not seen failing lately.

        PUBLISH on a cluster reaches every node (masters and replicas alike), so any live node
        hears every channel. Candidates are the nodes of the cluster's current map (found
        through any startup node that answers) and the startup nodes of REDIS_URL; a node that
        failed is tried again only after every other one has.
        """
        startup = cluster_nodes()
        if not startup:
            return None
        candidates = list(startup)
        try:
            data = await self._data_client()
            if isinstance(data, RedisCluster):
                known = [(str(n.host), int(n.port)) for n in data.get_nodes()]
                candidates = known + [n for n in startup if n not in known]
        except Exception as exc:  # no map now: the startup nodes will do
            logger.debug("Stream hub: no cluster map for choosing a node: %r", exc)
        fresh = [n for n in candidates if n not in self._failed_nodes]
        if not fresh:  # every one failed once: start the round again
            self._failed_nodes.clear()
            fresh = candidates
        return fresh[0]

    def _close_all(self, reason: str) -> None:
        for group in list(self._by_warehouse.values()):
            for listener in list(group):
                listener.close(reason)
        self._by_warehouse.clear()
        self._by_user.clear()

    async def _dispatch(self, channel: Any, payload: Any) -> None:
        try:
            event = events.parse(channel, payload)
        except (ValueError, KeyError, TypeError):
            logger.error("Stream hub: unreadable event on %r: %r", channel, payload[:200])
            return
        if isinstance(event, events.NotificationEvent):
            await self._notification(event)
        elif isinstance(event, events.ReminderEvent):
            await self._notification(event, frame_event=event.frame)
        elif isinstance(event, events.ChatEvent):
            await self._chat(event)

    async def _notification(
        self,
        event: events.NotificationEvent | events.ReminderEvent,
        frame_event: str = "notification",
    ) -> None:
        """A notification's new cursor (`event: notification`, with its id), or a reminder of
        it (`event: reminder`, no id: nothing new to replay; only to the users the read model's
        one rule says to tell loudly: not read or snoozed, not under their mute floor, not come
        quietly to them), or its holder's claim let go (`event: claim_expired`, no id, to the
        holder only). N's `read` and `quiet` are each stream user's."""
        if isinstance(event, events.NotificationEvent) and await self._is_canary(event):
            await self._canary(event)
            return
        # A reminder asks the one rule whom to tell; a claim let go goes to its holder anyway.
        reminder = isinstance(event, events.ReminderEvent) and event.frame == "reminder"
        snoozers = event.snoozers if isinstance(event, events.ReminderEvent) else frozenset()
        listeners = [
            listener
            for listener in self._by_warehouse.get(event.warehouse_id, ())
            if listener.sees(event.inboxes) and listener.user_id not in snoozers
        ]
        if not listeners:
            return
        # Each user with the inboxes they see (their streams agree: set_roles changes them all).
        users = {listener.user_id: listener.inboxes for listener in listeners}
        cursor = event.cursor
        now = timestamps.now_ms()
        try:
            view = await self._event_view(
                event.warehouse_id, event.notification_id, now, users, tell=reminder
            )
        except Exception as exc:
            # Only these streams lose this event: they end, and their clients reconnect and
            # replay it through the REST code. The subscription, and every other stream, go on.
            logger.warning("Stream hub: cannot read the notification at cursor %s: %r", cursor, exc)
            if not isinstance(exc, REDIS_UNAVAILABLE):
                await self._drop_data_client()  # it may be left broken: the next call starts anew
            for listener in listeners:
                listener.close("redis")
            return
        if view is None:  # expired and swept
            return
        if reminder:  # told loudly (SPEC 17): the read model's one rule, to_tell
            listeners = [listener for listener in listeners if listener.user_id in view.to_tell]
            if not listeners:
                return

        def variant(user: int) -> tuple[bool, bool]:
            return user in view.read_by, user in view.quiet_to

        frames: dict[tuple[bool, bool], bytes] = {}
        try:
            notification = Notification.from_json(view.content)
            if notification.expires_at_ms <= now:  # never shown once expired (SPEC section 2)
                return
            state = Lifecycle.from_json(view.state) if view.state else None
            actions = await self._actions(notification.message_type)
            for read, quiet in {variant(listener.user_id) for listener in listeners}:
                item = InboxItem(notification, cursor, read, state, quiet=quiet)
                frames[read, quiet] = sse.frame(
                    event=frame_event,
                    data=events.item_data(item, actions),
                    id=cursor if frame_event == "notification" else None,
                )
        except Exception:
            logger.exception("Stream hub: cannot present notification at cursor %s", cursor)
            for listener in listeners:  # they reconnect and replay it through the REST code
                listener.close("error")
            return
        queued = cursor if frame_event == "notification" else None
        for listener in listeners:
            listener.offer(queued, frames[variant(listener.user_id)])

    # --- The delivery objective's stream path (SPEC 16) ----------------------------------

    async def _beat(self) -> None:
        """Say, every STREAM_BEAT_SECONDS, that this process serves streams: a canary that
        does not reach it then makes its warehouse late."""
        now = time.monotonic()
        if now - self._beaten_at < settings.STREAM_BEAT_SECONDS:
            return
        self._beaten_at = now
        try:
            client = await self._data_client()
            await delivery_store.beat_async(client, stale_ms=STREAM_SERVED_WITHIN_MS)
        except Exception as exc:  # the next beat tries again; streams go on
            logger.warning("Stream hub: cannot record that it serves streams: %r", exc)

    async def _is_canary(self, event: events.NotificationEvent) -> bool:
        """Whether the event is a canary's: published into the canary user's inbox only."""
        if len(event.inboxes) != 1:
            return False
        held = delivery_canary.CANARY_USER.now()
        if held is None:
            held = await access.run_db(delivery_canary.CANARY_USER.get)
        return event.inboxes == delivery_canary.inbox_of(held)

    async def _canary(self, event: events.NotificationEvent) -> None:
        """Record that a canary reached this process's hub (Redis's clock at both ends); it
        reaches no stream."""
        try:
            view = await self._event_view(
                event.warehouse_id, event.notification_id, timestamps.now_ms(), {}
            )
            if view is None:
                return
            token = Notification.from_json(view.content).data.get("canary")
            if not isinstance(token, str):
                return
            client = await self._data_client()
            if self._arrive_script is None:
                self._arrive_script = client.register_script(delivery_store.ARRIVE_SOURCE)
            took = await delivery_store.arrive_async(
                client, self._arrive_script, event.warehouse_id, token, delivery_store.Path.STREAM
            )
        except Exception as exc:  # unmeasured: the canary turns late, which says so
            logger.warning("Stream hub: cannot record canary %s: %r", event.notification_id, exc)
            return
        if took is not None:
            delivery_metrics.DELIVERY_SECONDS.labels(
                str(event.warehouse_id), delivery_store.Path.STREAM
            ).observe(took / 1000)

    async def _actions(self, type_code: str) -> list[dict[str, Any]]:
        """N's `actions` of a type (SPEC 14) as this process holds them; when it holds none
        (first use, or the directory changed since), loaded in a thread first."""
        held = notification_hooks.actions.now(type_code)
        if held is None:
            held = await access.run_db(notification_hooks.actions.of, type_code)
        return held

    async def _chat(self, event: events.ChatEvent) -> None:
        listeners = [
            listener for member in event.member_ids for listener in self._by_user.get(member, ())
        ]
        if not listeners:
            return
        try:
            sender = await self._username(event.sender_id)
            frame = sse.frame(event="chat", data=events.chat_data(event, sender))
        except Exception:
            logger.exception("Stream hub: cannot present chat message %s", event.chat_id)
            for listener in listeners:  # they reconnect; the page fetches pending messages
                listener.close("error")
            return
        for listener in listeners:
            listener.offer(None, frame)

    async def _username(self, user_id: int) -> UserRef:
        cached = self._names.get(user_id)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        ref = (await access.run_db(access.usernames, [user_id]))[user_id]
        if len(self._names) > 10_000:
            self._names.clear()
        self._names[user_id] = (now + USERNAME_TTL_SECONDS, ref)
        return ref


async def stop(task: asyncio.Task[None]) -> None:
    """Cancel `task` and wait until it has ended.

    One cancel is not always enough: redis-py's connection code swallows a CancelledError
    that lands while it closes a connection, and the task would go on (a shutdown that never
    ends). So it is cancelled again until it is done.
    """
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()


async def _quietly(awaitable: Any) -> None:
    with contextlib.suppress(Exception):
        await awaitable
