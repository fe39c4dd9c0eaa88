"""The designs the project is measured against, each written the simple way its source does.

They keep their data under their own key prefix (`bench:`) in the same Redis, so a run
compares them with the project on the same server, with the same content, seconds apart.
They are baselines, not product code: no validation, no failure handling beyond the source's.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redis import Redis
from redis.commands.core import Script
from redis.exceptions import WatchError

PREFIX = "bench"
_LUA = Path(__file__).resolve().parent / "lua"


def _script(client: Redis, name: str) -> Script:
    return client.register_script((_LUA / f"{name}.lua").read_text(encoding="utf-8"))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


# --- Notifications ------------------------------------------------------------------------------


def notification_json(
    *, warehouse: int, message_type: str, title: str, body: str, data: dict[str, Any], ttl: int
) -> tuple[str, int]:
    """A notification as the source design serialises it (here JSON), and its creation ms."""
    created = int(time.time() * 1000)
    content = json.dumps(
        {
            "id": str(uuid.uuid4()),
            "message_type": message_type,
            "warehouse": warehouse,
            "title": title,
            "body": body,
            "data": data,
            "created_at_ms": created,
            "expires_at_ms": created + ttl * 1000,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return content, created


class SourceDesignInbox:
    """The source text's notification design (seeds/001, "A Redis-based notification design").

    The subscribers of (message type, warehouse) are a Redis set; publishing reads the set and
    adds the whole serialised notification to every subscriber's sorted set, scored by its
    creation time (here the ZADDs go in one pipeline, the least round trips that design allows:
    SMEMBERS, then the pipeline). Polling is a ZRANGEBYSCORE after the client's last timestamp.
    """

    def __init__(self, client: Redis, name: str) -> None:
        self.client = client
        self.base = f"{PREFIX}:src:{{{name}}}"

    def subscribers_key(self) -> str:
        return f"{self.base}:subs"

    def inbox_key(self, subscriber: str) -> str:
        return f"{self.base}:inbox:{subscriber}"

    def subscribe(self, subscribers: Sequence[str]) -> None:
        self.client.sadd(self.subscribers_key(), *subscribers)

    def publish(self, content: str, created_ms: int) -> int:
        subscribers = [_text(s) for s in self.client.smembers(self.subscribers_key())]
        pipe = self.client.pipeline(transaction=False)
        for subscriber in subscribers:
            pipe.zadd(self.inbox_key(subscriber), {content: created_ms})
        pipe.execute()
        return len(subscribers)

    def poll(self, subscriber: str, since_ms: int) -> list[Any]:
        return list(self.client.zrangebyscore(self.inbox_key(subscriber), f"({since_ms}", "+inf"))


class BareFanOut:
    """The least a fan-out into N inboxes can cost Redis: one script, one ZADD per inbox."""

    def __init__(self, client: Redis, name: str, subscribers: Sequence[str]) -> None:
        self.client = client
        self.script = _script(client, "zadd_loop")
        base = f"{PREFIX}:bare:{{{name}}}"
        self.inboxes = [f"{base}:inbox:{s}" for s in subscribers]
        self.cursor = 0

    def publish(self) -> int:
        self.cursor += 1
        return int(self.script(keys=self.inboxes, args=[self.cursor]))


class PageIndex:
    """A bounded page read: an index sorted set (cursor -> cursor) and a contents hash.

    What a poll must at least do whatever the design: find up to a page of cursors after
    `since` (ZRANGEBYSCORE ... LIMIT 0 page) and fetch their contents (HMGET).
    """

    def __init__(self, client: Redis, name: str) -> None:
        self.client = client
        base = f"{PREFIX}:page:{{{name}}}"
        self.index, self.contents = f"{base}:index", f"{base}:contents"

    def fill(self, contents: Sequence[str]) -> None:
        pipe = self.client.pipeline(transaction=False)
        for i, content in enumerate(contents, start=1):
            pipe.zadd(self.index, {str(i): i})
            pipe.hset(self.contents, str(i), content)
        pipe.execute()

    def read(self, since: int, page: int = 50) -> list[Any]:
        cursors: list[Any] = list(
            self.client.zrangebyscore(self.index, f"({since}", "+inf", start=0, num=page)
        )
        return list(self.client.hmget(self.contents, cursors)) if cursors else []


# --- Chat -----------------------------------------------------------------------------------------


def acquire_lock(client: Redis, lockname: str, acquire_timeout: float = 10.0) -> str | None:
    """Redis in Action 6.2 (listing 6.8, with 6.2.5's timeout as SET NX PX): spin until set."""
    identifier = str(uuid.uuid4())
    end = time.time() + acquire_timeout
    while time.time() < end:
        if client.set(f"lock:{lockname}", identifier, nx=True, px=10_000):
            return identifier
        time.sleep(0.001)
    return None


def release_lock(client: Redis, lockname: str, identifier: str) -> bool:
    """Redis in Action 6.2 (listing 6.9): WATCH, check it is still ours, delete in MULTI/EXEC."""
    key = f"lock:{lockname}"
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(key)
                if _text(pipe.get(key) or b"") == identifier:
                    pipe.multi()
                    pipe.delete(key)
                    pipe.execute()
                    return True
                pipe.unwatch()
                return False
            except WatchError:
                continue


class LockedChat:
    """Redis in Action 6.5.2's group chat with its lock (listing 6.25's send_message).

    Sending takes the chat's lock, INCRs the message id, ZADDs the JSON message scored by its
    id, and releases the lock; concurrent senders spin on the lock with 1 ms sleeps.
    """

    def __init__(self, client: Redis, chat_id: str) -> None:
        self.client = client
        self.chat_id = chat_id

    def send(self, sender: int, message: str) -> int:
        identifier = acquire_lock(self.client, f"chat:{self.chat_id}")
        if not identifier:
            raise RuntimeError("Couldn't get the lock")
        try:
            mid = int(self.client.incr(f"{PREFIX}:ria:ids:{self.chat_id}"))
            packed = json.dumps(
                {"id": mid, "ts": time.time(), "sender": sender, "message": message}
            )
            self.client.zadd(f"{PREFIX}:ria:msgs:{self.chat_id}", {packed: mid})
        finally:
            release_lock(self.client, f"chat:{self.chat_id}", identifier)
        return mid


class BareChat:
    """The least an atomic send can cost: one script doing INCR and ZADD, one round trip."""

    def __init__(self, client: Redis, chat_id: str) -> None:
        self.client = client
        self.script = _script(client, "send_bare")
        base = f"{PREFIX}:bare:{{chat:{chat_id}}}"
        self.keys = [f"{base}:seq", f"{base}:msgs"]

    def send(self, sender: int, message: str) -> int:
        return int(self.script(keys=self.keys, args=[sender, message, int(time.time() * 1000)]))


class PullMessaging:
    """Redis in Action 6.5.2, multi-recipient pull messaging, as the book writes it.

    `chat:<id>` members scored by the last id they saw, `seen:<user>` chats scored likewise,
    `msgs:<id>` JSON messages scored by id. fetch_pending_messages is listing 6.26: read the
    seen list, fetch every chat's new messages in one pipeline, then per chat with news update
    both seen scores and trim what everyone has seen.
    """

    def __init__(self, client: Redis) -> None:
        self.client = client
        self.base = f"{PREFIX}:ria"

    def create_chat(self, chat_id: str, members: Sequence[str]) -> None:
        pipe = self.client.pipeline(True)
        pipe.zadd(f"{self.base}:chat:{chat_id}", dict.fromkeys(members, 0))
        for member in members:
            pipe.zadd(f"{self.base}:seen:{member}", {chat_id: 0})
        pipe.execute()

    def send_many(self, chat_id: str, sender: str, messages: Sequence[str]) -> None:
        """Set-up only (not measured): messages appended without the lock."""
        first = int(self.client.incrby(f"{self.base}:ids:{chat_id}", len(messages))) - len(messages)
        pipe = self.client.pipeline(transaction=False)
        for i, message in enumerate(messages, start=first + 1):
            packed = json.dumps({"id": i, "ts": time.time(), "sender": sender, "message": message})
            pipe.zadd(f"{self.base}:msgs:{chat_id}", {packed: i})
        pipe.execute()

    def fetch_pending_messages(self, recipient: str) -> list[tuple[str, list[dict[str, Any]]]]:
        conn = self.client
        seen: list[Any] = list(conn.zrange(f"{self.base}:seen:{recipient}", 0, -1, withscores=True))
        pipeline = conn.pipeline(True)
        for chat_id, seen_id in seen:
            pipeline.zrangebyscore(f"{self.base}:msgs:{_text(chat_id)}", seen_id + 1, "inf")
        chat_info: list[Any] = list(zip(seen, pipeline.execute(), strict=True))
        for i, ((chat_id, seen_id), messages) in enumerate(chat_info):
            if not messages:
                continue
            chat_id = _text(chat_id)
            messages[:] = map(json.loads, messages)
            seen_id = messages[-1]["id"]
            conn.zadd(f"{self.base}:chat:{chat_id}", {recipient: seen_id})
            min_id = conn.zrange(f"{self.base}:chat:{chat_id}", 0, 0, withscores=True)
            pipeline.zadd(f"{self.base}:seen:{recipient}", {chat_id: seen_id})
            if min_id:
                pipeline.zremrangebyscore(f"{self.base}:msgs:{chat_id}", 0, min_id[0][1])
            chat_info[i] = (chat_id, messages)
        pipeline.execute()
        return [info for info in chat_info if isinstance(info[0], str)]


# --- Quiet floor ----------------------------------------------------------------------------------

# One call that wakes every alert a silence held back. Per alert it does the writes a wake needs
# whatever the design: the state taken off the silence, a new raise cursor, back in the open
# index and the changes, one more open alert in its class's tally, a history entry, and its
# content and route read for the delivery that follows.
_WAKE_ALL = """
local held = redis.call('ZRANGE', KEYS[1], 0, -1)
local reply = {}
for _, id in ipairs(held) do
  local state = cjson.decode(redis.call('HGET', KEYS[2], id))
  state.silenced = nil
  redis.call('HSET', KEYS[2], id, cjson.encode(state))
  local cursor = redis.call('INCR', KEYS[3])
  redis.call('ZADD', KEYS[4], cursor, id)
  redis.call('ZADD', KEYS[5], cursor, id)
  redis.call('HINCRBY', KEYS[6], state.class, 1)
  local entry = cjson.encode({event = 'unsilenced', at = tonumber(ARGV[1])})
  local before = redis.call('HGET', KEYS[7], id)
  redis.call('HSET', KEYS[7], id, before and (before .. ',' .. entry) or entry)
  reply[#reply + 1] = {id, redis.call('HGET', KEYS[8], id), redis.call('HGET', KEYS[9], id)}
end
redis.call('DEL', KEYS[1])
return reply
"""


class BareWake:
    """The simple design of a silence's end: every alert it held back woken by one script in
    one call, however many there are (what SILENCE_WAKE_BATCH bounds the project's calls
    against). The alerts are held in a sorted set; `hold` puts `count` of them there."""

    def __init__(self, client: Redis, name: str) -> None:
        self.client = client
        self.script = client.register_script(_WAKE_ALL)
        base = f"{PREFIX}:wake:{{{name}}}"
        self.keys = [
            f"{base}:{part}"
            for part in ("held", "states", "cursor", "open", "changes", "tally", "history")
        ] + [f"{base}:notes", f"{base}:routes"]

    def hold(self, count: int, content: str) -> None:
        held, states, _, _, _, _, history, notes, routes = self.keys
        state = json.dumps(
            {"status": "open", "severity": "warning", "silenced": True, "silence": 1, "class": "c1"}
        )
        first = json.dumps({"event": "published"}) + "," + json.dumps({"event": "silenced"})
        pipe = self.client.pipeline(transaction=False)
        for n in range(count):
            slot = str(n + 1)
            pipe.zadd(held, {slot: 0})
            pipe.hset(states, slot, state)
            pipe.hset(history, slot, first)
            pipe.hset(notes, slot, content)
            pipe.hset(routes, slot, f"c1 u:{n % 5}")
        pipe.execute()

    def wake(self) -> int:
        return len(self.script(keys=self.keys, args=[int(time.time() * 1000)]))
