"""stream/batched_calls.py: calls that arrive while a batch runs go together in the next."""

from __future__ import annotations

import asyncio

import pytest

from stream.batched_calls import BatchedCalls


class Batches:
    """Doubles each argument; a negative one fails alone; held until released."""

    def __init__(self) -> None:
        self.seen: list[list[int]] = []
        self.release = asyncio.Event()
        self.fail_whole_next = False

    async def __call__(self, arguments: list[int]) -> list[int | Exception]:
        self.seen.append(list(arguments))
        await self.release.wait()
        if self.fail_whole_next:
            self.fail_whole_next = False
            raise ConnectionError("Redis went away")
        return [ValueError(a) if a < 0 else 2 * a for a in arguments]


def test_calls_arriving_while_a_batch_runs_go_together_in_the_next_within_the_limit():
    async def scenario() -> None:
        batches = Batches()
        calls = BatchedCalls(batches, limit=3)
        first = asyncio.ensure_future(calls.call(1))
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # the first batch, [1], is running
        later = [asyncio.ensure_future(calls.call(n)) for n in range(2, 7)]
        await asyncio.sleep(0)
        batches.release.set()
        assert await first == 2
        assert await asyncio.gather(*later) == [4, 6, 8, 10, 12]
        assert batches.seen == [[1], [2, 3, 4], [5, 6]]

    asyncio.run(scenario())


def test_each_call_gets_its_own_failure_or_the_batchs():
    async def scenario() -> None:
        batches = Batches()
        batches.release.set()
        calls = BatchedCalls(batches, limit=10)
        outcomes = await asyncio.gather(calls.call(5), calls.call(-1), return_exceptions=True)
        assert outcomes[0] == 10
        assert isinstance(outcomes[1], ValueError)
        batches.fail_whole_next = True
        outcomes = await asyncio.gather(calls.call(1), calls.call(2), return_exceptions=True)
        assert all(isinstance(o, ConnectionError) for o in outcomes)
        assert await calls.call(3) == 6  # and the next batch runs

    asyncio.run(scenario())


def test_a_caller_that_leaves_does_not_cancel_the_others():
    async def scenario() -> None:
        batches = Batches()
        calls = BatchedCalls(batches, limit=10)
        leaving = asyncio.ensure_future(calls.call(1))
        staying = asyncio.ensure_future(calls.call(2))
        await asyncio.sleep(0)
        leaving.cancel()
        batches.release.set()
        assert await staying == 4
        with pytest.raises(asyncio.CancelledError):
            await leaving

    asyncio.run(scenario())


def test_a_new_event_loop_starts_afresh():
    """A server started again in the same process: a batch its old loop left unfinished does
    not hold up the new one."""
    batches = Batches()
    calls = BatchedCalls(batches, limit=10)

    async def left_unfinished() -> None:
        waiting = asyncio.ensure_future(calls.call(1))
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # its batch is waiting for a release that never comes
        assert not waiting.done()

    loop = asyncio.new_event_loop()
    loop.run_until_complete(left_unfinished())
    loop.close()

    async def next_server() -> int:
        batches.release = asyncio.Event()
        batches.release.set()
        return await asyncio.wait_for(calls.call(2), 10)  # a fault here would wait forever

    assert asyncio.run(next_server()) == 4
