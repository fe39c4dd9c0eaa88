"""Rows 9 and 10: chat send under 8 concurrent senders, and the pending fetch of 20 chats.

The project is called through its services (`message_send`, `messages_fetch_pending`), the
baselines are Redis in Action's designs (benchmarks/baselines.py). Senders are threads of this
process, each with its own connection from the pool, started together behind a barrier.
Round trips are counted on a single call after a warm-up (scripts already loaded).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from benchmarks.baselines import BareChat, LockedChat, PullMessaging
from benchmarks.context import Bench, make_users
from benchmarks.harness import Line, Measure, at_least, compared, interleave, paired
from benchmarks.probes import wire

BODY = "Bin A-01-03 is replenished, wave 8813 can go"


def _concurrently(senders: int, work: Callable[[int], None]) -> float:
    """Run work(i) in `senders` threads started together; returns the wall seconds."""
    barrier = threading.Barrier(senders + 1)
    failures: list[BaseException] = []

    def body(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as exc:  # reported below: a failed side must not look fast
            failures.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(senders)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return time.perf_counter() - started


def _trips(call: Callable[[], object]) -> int:
    wire.reset()
    call()
    return wire.count


def send_rows(bench: Bench) -> list[Line]:
    from messaging import services

    config = bench.config
    senders = make_users("bench-chat-", config.chat_senders)
    chat = services.chat_create_group(
        creator=senders[0], member_ids=[u.pk for u in senders[1:]], message="shift starts"
    )
    locked = LockedChat(bench.client(), "c-lock")
    bare = BareChat(bench.client(), "c-bare")
    per = config.sends_per_sender
    total = config.chat_senders * per

    def project() -> float:
        def work(i: int) -> None:
            for _ in range(per):
                services.message_send(user=senders[i], chat_id=chat.id, body=BODY)

        return total / _concurrently(config.chat_senders, work)

    def lock_design() -> float:
        def work(i: int) -> None:
            for _ in range(per):
                locked.send(senders[i].pk, BODY)

        return total / _concurrently(config.chat_senders, work)

    def bare_script() -> float:
        def work(i: int) -> None:
            for _ in range(per):
                bare.send(senders[i].pk, BODY)

        return total / _concurrently(config.chat_senders, work)

    wire.install()
    # Warm up: scripts loaded, each client's connection open (not counted as round trips).
    services.message_send(user=senders[0], chat_id=chat.id, body=BODY)
    locked.send(senders[0].pk, BODY)
    bare.send(senders[0].pk, BODY)
    trips = {
        "project": _trips(
            lambda: services.message_send(user=senders[0], chat_id=chat.id, body=BODY)
        ),
        "lock": _trips(lambda: locked.send(senders[0].pk, BODY)),
        "bare": _trips(lambda: bare.send(senders[0].pk, BODY)),
    }
    results = interleave(
        config.rounds, {"project": project, "lock": lock_design, "bare": bare_script}
    )
    rate = {k: Measure("sends/s", v, fmt="{:.0f}") for k, v in results.items()}
    work = f"chat send, {config.chat_senders} concurrent senders, one chat: sends/s"
    return [
        compared(
            "9",
            work,
            rate["project"],
            rate["lock"],
            "Redis-lock design",
            ratio="project/baseline",
            goal="≥ 10x the lock design",
            minimum=10,
            note=f"lock design: {trips['lock']} round trips per uncontended send",
        ),
        compared(
            "9",
            work,
            rate["project"],
            rate["bare"],
            "bare INCR+ZADD script",
            ratio="project/baseline",
            goal="≥ 0.5x bare",
            minimum=0.5,
        ),
        Line(
            row="9",
            work="chat send: round trips per send",
            project=Measure("", [float(trips["project"])], fmt="{:.0f}"),
            baseline=Measure("", [float(trips["bare"])], fmt="{:.0f}"),
            baseline_name="bare",
            goal="1",
            met=trips["project"] <= 1,
        ),
    ]


def pending_rows(bench: Bench) -> list[Line]:
    from messaging import services

    config = bench.config
    writer, reader = make_users("bench-pending-", 2)
    chat_ids = [
        services.chat_create_group(creator=writer, member_ids=[reader.pk], message="hello").id
        for _ in range(config.chats)
    ]
    ria = PullMessaging(bench.client())
    ria_ids = [f"p{i}" for i in range(config.chats)]
    for chat_id in ria_ids:
        ria.create_chat(chat_id, ["writer", "reader"])
        ria.send_many(chat_id, "writer", ["hello"])
    per_chat = config.pending // config.chats

    def project_fill() -> None:
        for chat_id in chat_ids:
            for _ in range(per_chat):
                services.message_send(user=writer, chat_id=chat_id, body=BODY)

    def ria_fill() -> None:
        for chat_id in ria_ids:
            ria.send_many(chat_id, "writer", [BODY] * per_chat)

    def project_fetch() -> int:
        return sum(len(p.messages) for p in services.messages_fetch_pending(user=reader))

    def ria_fetch() -> int:
        return sum(len(messages) for _, messages in ria.fetch_pending_messages("reader"))

    def timed(fill: Callable[[], None], fetch: Callable[[], int], expect: int) -> float:
        fill()
        started = time.perf_counter()
        got = fetch()
        spent = time.perf_counter() - started
        assert got == expect, (got, expect)
        return spent * 1000

    def idle(fetch: Callable[[], int]) -> float:
        started = time.perf_counter()
        for _ in range(config.idle_fetches):
            assert fetch() == 0
        return (time.perf_counter() - started) / config.idle_fetches * 1000

    wire.install()
    project_fetch()  # the first messages delivered, scripts loaded
    ria_fetch()
    trips = {}
    project_fill()
    ria_fill()
    trips["project pending"] = _trips(project_fetch)
    trips["ria pending"] = _trips(ria_fetch)
    trips["project idle"] = _trips(project_fetch)
    trips["ria idle"] = _trips(ria_fetch)
    results = interleave(
        config.rounds,
        {
            "project pending": lambda: timed(project_fill, project_fetch, config.pending),
            "ria pending": lambda: timed(ria_fill, ria_fetch, config.pending),
            "project idle": lambda: idle(project_fetch),
            "ria idle": lambda: idle(ria_fetch),
        },
    )
    ms = {k: Measure("ms", v, fmt="{:.2f}") for k, v in results.items()}
    lines = []
    for kind, label, goal in (
        ("pending", f"{config.pending} pending", 3.0),
        ("idle", "nothing new", 1.0),
    ):
        ratio = paired(ms[f"ria {kind}"].values, ms[f"project {kind}"].values)
        lines.append(
            Line(
                row="10",
                work=f"pending fetch, member of {config.chats} chats, {label}: ms per fetch",
                project=ms[f"project {kind}"],
                baseline=ms[f"ria {kind}"],
                baseline_name="Redis in Action's fetch",
                ratio=ratio,
                goal=f"≥ {goal:g}x",
                met=at_least(ratio, goal),
                note=(
                    f"round trips: project {trips[f'project {kind}']}, "
                    f"Redis in Action {trips[f'ria {kind}']}"
                ),
            )
        )
    worst = max(trips["project pending"], trips["project idle"])
    lines.append(
        Line(
            row="10",
            work=f"pending fetch: round trips ({config.pending} pending / nothing new)",
            project=Measure("", [float(worst)], fmt="{:.0f}"),
            goal="≤ 2",
            met=worst <= 2,
            note=f"{trips['project pending']} / {trips['project idle']}",
        )
    )
    return lines
