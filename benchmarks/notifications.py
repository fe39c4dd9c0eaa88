"""Benchmark: fan-out, polling by 500 operators, and the expiry sweep over a million entries.

Run: `python -m benchmarks.notifications [--operators 500] [--notifications 2000]`.
Prints figures; asserts nothing (timing goals live here, not in tests).
"""

from __future__ import annotations

import argparse
import time

from benchmarks import _setup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--operators", type=int, default=500)
    parser.add_argument(
        "--notifications",
        type=int,
        default=2000,
        help="notifications published (each reaches every operator)",
    )
    parser.add_argument("--polls", type=int, default=2000)
    args = parser.parse_args()

    server = _setup.start()
    try:
        run(args)
    finally:
        server.stop()


def run(args: argparse.Namespace) -> None:
    from django.contrib.auth.models import User

    from config import timestamps
    from config.redis import get_redis
    from notifications import selectors, services
    from subscriptions.models import MessageType, Subscription, Warehouse

    redis = get_redis()
    warehouse = Warehouse.objects.create(code="SH01", name="Shanghai")
    message_type = MessageType.objects.create(
        code="REP_NOTICE", name="Replenish", default_ttl_seconds=60
    )
    users = User.objects.bulk_create(User(username=f"op{i}") for i in range(args.operators))
    Subscription.objects.bulk_create(
        Subscription(message_type=message_type, warehouse=warehouse, user=u) for u in users
    )
    from subscriptions import services as subscription_services

    subscription_services.sync_all()
    print(f"{args.operators} operators, each directly subscribed to REP_NOTICE in SH01")

    def publish(i: int) -> None:
        services.publish(
            message_type="REP_NOTICE",
            warehouse=warehouse,
            title=f"Replenish {i}",
            body="Stock is -12 after wave 8812",
            data={"bin": f"A-{i:05d}"},
        )

    baseline = redis.info("memory")["used_memory"]
    started = time.perf_counter()
    for i in range(args.notifications - 100):
        publish(i)
    elapsed = time.perf_counter() - started
    entries = (args.notifications - 100) * args.operators
    used = redis.info("memory")["used_memory"] - baseline
    print(
        f"publish: {args.notifications - 100} notifications -> {entries:,} inbox entries in "
        f"{elapsed:.1f} s ({(args.notifications - 100) / elapsed:.0f}/s from one thread)"
    )
    print(
        f"  Redis memory: {used / 1e6:.0f} MB, {used / entries:.0f} bytes per delivery "
        "(content stored once per notification)"
    )
    _setup.slowlog_on(redis)
    for i in range(args.notifications - 100, args.notifications):
        publish(i)
    publish_us = _setup.slowlog_durations(redis, "evalsha")
    print(
        f"  Redis time per publish to {args.operators} inboxes: "
        f"p50 {_setup.percentile(publish_us, 0.5) / 1000:.2f} ms, "
        f"max {max(publish_us) / 1000:.2f} ms"
    )

    # Polls of operators with a full inbox (the worst case: nothing read yet).
    redis.slowlog_reset()
    started = time.perf_counter()
    cursor = 0
    for i in range(args.polls):
        user = users[i % len(users)]
        page = selectors.inbox_page(user=user, warehouse_id=warehouse.pk, since=cursor, limit=50)
    elapsed = time.perf_counter() - started
    poll_us = _setup.slowlog_durations(redis, "evalsha")
    print(
        f"poll (inbox of {args.notifications} unread): {args.polls} polls in {elapsed:.1f} s "
        f"({args.polls / elapsed:.0f}/s from one client thread); Redis time per poll "
        f"p50 {_setup.percentile(poll_us, 0.5) / 1000:.2f} ms, p99 "
        f"{_setup.percentile(poll_us, 0.99) / 1000:.2f} ms; unread_count={page.unread_count}"
    )
    load = args.operators / 10 * _setup.percentile(poll_us, 0.5) / 1e6
    print(
        f"  => {args.operators} operators polling every 10 s keep Redis busy "
        f"{load * 100:.1f}% of one core"
    )

    # Everything expires: sweep it all in bounded calls.
    redis.slowlog_reset()
    started = time.perf_counter()
    report = services.expire_all(at_ms=timestamps.now_ms() + 3600_000)
    elapsed = time.perf_counter() - started
    sweep_us = _setup.slowlog_durations(redis, "evalsha", "zrangebyscore", "hmget", "sscan")
    print(
        f"sweep: {report} in {elapsed:.1f} s; slowest single Redis call "
        f"{max(sweep_us) / 1000:.2f} ms, p99 {_setup.percentile(sweep_us, 0.99) / 1000:.2f} ms"
    )
    print(
        f"keys left: {redis.dbsize()} (the warehouse's cursor sequence, subscriber sets, and "
        "today's report counts, which expire by themselves)"
    )


if __name__ == "__main__":
    main()
