"""Calls that arrive together, run together: one worker-thread call for a burst of stream opens.

An open whose user the directory does not hold yet must authenticate in a worker thread
(the directory and the session store are synchronous). After a deploy, or any change of users,
roles or tokens, every operator's stream opens that way at once; one thread call and one
database query per open would queue them behind the few worker threads. Instead, while one
batch runs, the calls that arrive wait and then go together in the next (up to `limit`), and
the batch function answers each of them: one thread hop, one version read and two queries for
the tokens of the lot (stream/access.identify_all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

A = TypeVar("A")
R = TypeVar("R")


class BatchedCalls(Generic[A, R]):
    """`await calls.call(argument)`: `run_batch`'s answer for it; an answer that is an
    exception is raised. Used from another event loop, it starts afresh there."""

    def __init__(
        self, run_batch: Callable[[list[A]], Awaitable[list[R | Exception]]], *, limit: int
    ) -> None:
        self._run_batch = run_batch
        self._limit = limit
        self._queue: list[tuple[A, asyncio.Future[R]]] = []
        self._runner: asyncio.Task[None] | None = None

    async def call(self, argument: A) -> R:
        loop = asyncio.get_running_loop()
        if self._runner is not None and self._runner.get_loop() is not loop:
            # A new event loop (a server started again in the same process): what the old
            # one left queued has nobody waiting for it.
            self._runner, self._queue = None, []
        answer: asyncio.Future[R] = loop.create_future()
        self._queue.append((argument, answer))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._run())
        # A caller that gives up (its client left) must not cancel the batch.
        return await asyncio.shield(answer)

    async def _run(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[: self._limit], self._queue[self._limit :]
            try:
                answers = await self._run_batch([argument for argument, _ in batch])
            except asyncio.CancelledError:  # the server is stopping
                for _, answer in batch + self._queue:
                    answer.cancel()
                self._queue = []
                raise
            except Exception as exc:  # every call of the batch gets the failure
                answers = [exc] * len(batch)
            for (_, answer), outcome in zip(batch, answers, strict=True):
                if answer.done():
                    continue
                if isinstance(outcome, Exception):
                    answer.set_exception(outcome)
                    answer.exception()  # marks it retrieved, should its caller have left
                else:
                    answer.set_result(outcome)
