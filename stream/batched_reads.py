"""One Redis read for every stream of a warehouse that opens at the same moment.

After a deploy every operator's stream reconnects at once; each must read its warehouse's
cursor after it has registered with the hub (what is published later reaches it live, what
was published before is below the cursor). A thousand opens need not be a thousand reads: a
read that is *sent* after a stream registered serves it as well as its own would. So the
streams that ask while a read of their warehouse is on its way wait for the next one, which is
sent once that one is back, and share it: at most one read per warehouse is in flight, and
each answers everyone who asked before it was sent. Besides saving the round trips, a burst
then cannot queue for the connection pool long enough to time out (a 503 for the stream).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class BatchedReads(Generic[T]):
    """`await reads.get(key)`: the answer of a `read(key)` sent after this call began.

    Bound to the event loop it is first used on (the hub makes a new one per loop).
    """

    def __init__(self, read: Callable[[int], Awaitable[T]]) -> None:
        self._read = read
        self._waiting: dict[int, asyncio.Future[T]] = {}  # the next read's answer, per key
        self._in_flight: dict[int, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def get(self, key: int) -> T:
        answer = self._waiting.get(key)
        if answer is None:
            answer = asyncio.get_running_loop().create_future()
            self._waiting[key] = answer
            task = asyncio.ensure_future(self._send(key, answer))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        # A caller that gives up (its client left) must not cancel the others' answer.
        return await asyncio.shield(answer)

    async def _send(self, key: int, answer: asyncio.Future[T]) -> None:
        lock = self._in_flight.setdefault(key, asyncio.Lock())
        async with lock:
            # From here on, whoever asks waits for the next read: this one is sent now, and
            # only those who asked before may take its answer.
            if self._waiting.get(key) is answer:
                del self._waiting[key]
            try:
                value = await self._read(key)
            except asyncio.CancelledError:  # the server is stopping
                answer.cancel()
                raise
            except Exception as exc:  # every waiter gets the failure (a 503 each)
                answer.set_exception(exc)
                answer.exception()  # marks it retrieved, should every waiter have left
                return
            answer.set_result(value)
