"""stream/batched_reads.py: one read per warehouse in flight, each answering only those who
asked before it was sent."""

from __future__ import annotations

import asyncio

import pytest

from stream.batched_reads import BatchedReads


class Reads:
    """A read whose answer is the number of reads sent so far, held until released."""

    def __init__(self) -> None:
        self.sent = 0
        self.release = asyncio.Event()
        self.fail_next = False

    async def __call__(self, key: int) -> tuple[int, int]:
        self.sent += 1
        number = self.sent
        await self.release.wait()
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("Redis went away")
        return key, number


def test_callers_share_reads_and_never_take_one_sent_before_they_asked():
    async def scenario() -> None:
        reads = Reads()
        batched = BatchedReads(reads)

        async def ask(key: int) -> None:
            before = reads.sent
            got_key, number = await batched.get(key)
            assert got_key == key
            assert number > before  # a read sent after this call began

        first = [asyncio.ensure_future(ask(1)) for _ in range(50)]
        await asyncio.sleep(0)  # the first read is sent; these 50 wait on it
        later = [asyncio.ensure_future(ask(1)) for _ in range(50)]
        other = [asyncio.ensure_future(ask(2)) for _ in range(10)]
        await asyncio.sleep(0)
        reads.release.set()
        await asyncio.gather(*first, *later, *other)
        assert reads.sent <= 4  # two for warehouse 1 (the first, then the next), one or two for 2

    asyncio.run(scenario())


def test_a_failed_read_fails_every_waiter_and_the_next_caller_reads_again():
    async def scenario() -> None:
        reads = Reads()
        batched = BatchedReads(reads)
        reads.fail_next = True
        waiters = [asyncio.ensure_future(batched.get(7)) for _ in range(5)]
        await asyncio.sleep(0)
        reads.release.set()
        outcomes = await asyncio.gather(*waiters, return_exceptions=True)
        assert all(isinstance(o, ConnectionError) for o in outcomes)
        assert await batched.get(7) == (7, 2)

    asyncio.run(scenario())


def test_a_caller_that_leaves_does_not_cancel_the_others():
    async def scenario() -> None:
        reads = Reads()
        batched = BatchedReads(reads)
        leaving = asyncio.ensure_future(batched.get(3))
        staying = asyncio.ensure_future(batched.get(3))
        await asyncio.sleep(0)
        leaving.cancel()
        reads.release.set()
        assert await staying == (3, 1)
        with pytest.raises(asyncio.CancelledError):
            await leaving

    asyncio.run(scenario())
