"""Benchmark: N open event streams under uvicorn, compared with 10 s polling.

Run: `python -m benchmarks.stream --streams 1000` (and `--streams 100`).

Starts an embedded Redis and the ASGI server (`uvicorn config.asgi:application`, one process)
on a throw-away SQLite database; opens N streams as N operators (token authentication; each
operator's role receives the notifications); publishes notifications one at a time and
measures, at the clients, the delay from just before `publish()` to the event's arrival; the
server's memory per open stream (RSS delta / N); the regular API's answer times meanwhile; and
how late the same publishes are seen by operators polling every 10 s. Prints figures; asserts
nothing. Clients are raw asyncio sockets (a small HTTP/1.1 chunked reader), so the client
process costs little of the machine the server also runs on.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import resource
import secrets
import socket
import subprocess
import sys
import time

from benchmarks import _setup
from benchmarks.probes import tree_cpu_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--publishes", type=int, default=20)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between publishes")
    parser.add_argument("--pollers", type=int, default=100, help="clients polling every 10 s")
    parser.add_argument("--poll-interval", type=float, default=10.0)
    args = parser.parse_args()

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by the server
    redis_server = _setup.start()
    server = None
    try:
        operators, warehouse_id = prepare(args.streams + args.pollers)
        port = _free_port()
        server = start_server(port)
        asyncio.run(run(args, port, operators, warehouse_id, server.pid))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=15)
        redis_server.stop()


def prepare(count: int) -> tuple[list[str], int]:
    """`count` operators in a role subscribed to REP_NOTICE in one warehouse; their tokens."""
    from django.contrib.auth.models import Group, User
    from rest_framework.authtoken.models import Token

    from subscriptions import services as subscription_services
    from subscriptions.models import MessageType, Subscription, Warehouse

    warehouse = Warehouse.objects.create(code="SH01", name="Shanghai")
    message_type = MessageType.objects.create(
        code="REP_NOTICE", name="Replenish", default_ttl_seconds=3600
    )
    role = Group.objects.create(name="Operators")
    users = User.objects.bulk_create(User(username=f"op{i}") for i in range(count))
    role.user_set.add(*users)
    Subscription.objects.create(message_type=message_type, warehouse=warehouse, role=role)
    subscription_services.sync_all()
    tokens = Token.objects.bulk_create(Token(user=u, key=secrets.token_hex(20)) for u in users)
    return [t.key for t in tokens], warehouse.pk


def start_server(port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "config.asgi:application",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
        "--timeout-graceful-shutdown",
        "2",
    ]
    server = subprocess.Popen(command, env={**os.environ, "LOG_LEVEL": "WARNING"})
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start") from None
            time.sleep(0.1)


NOTIFICATION_ID = re.compile(rb"event: notification\nid: (\d+)\n")


class StreamClient(asyncio.Protocol):
    """One open stream: a socket read by callbacks (no coroutine per read), which notes when
    each notification's id arrives. Each event is written in one piece, so chunked-transfer
    framing only ever sits between events; the parser looks for whole events only."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.ready = asyncio.Event()
        self.arrivals: dict[int, float] = {}
        self.ended = False
        self.status = b""
        self._buffer = b""

    async def open(self, port: int, warehouse_id: int) -> None:
        loop = asyncio.get_running_loop()
        self.transport, _ = await loop.create_connection(lambda: self, "127.0.0.1", port)
        self.transport.write(
            (
                f"GET /api/v1/stream/?warehouse={warehouse_id} HTTP/1.1\r\n"
                f"Host: 127.0.0.1\r\nAuthorization: Token {self.token}\r\n"
                "Accept: text/event-stream\r\n\r\n"
            ).encode()
        )
        await asyncio.wait_for(self.ready.wait(), 60)
        if not self.status.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(self.status.decode())

    def data_received(self, data: bytes) -> None:
        now = time.time()
        if not self.status:
            self.status = data.split(b"\r\n", 1)[0]
        self._buffer += data
        end = self._buffer.rfind(b"\n\n")
        if end < 0:
            return
        complete, self._buffer = self._buffer[: end + 2], self._buffer[end + 2 :]
        for match in NOTIFICATION_ID.finditer(complete):
            self.arrivals.setdefault(int(match[1]), now)
        if b"event: ready" in complete or not self.status.startswith(b"HTTP/1.1 200"):
            self.ready.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.ready.set()

    def close(self) -> None:
        self.transport.close()


async def run(
    args: argparse.Namespace, port: int, tokens: list[str], warehouse_id: int, pid: int
) -> None:
    import httpx

    from notifications.services import publish

    base = f"http://127.0.0.1:{port}"
    stream_tokens, poll_tokens = tokens[: args.streams], tokens[args.streams :]
    api = httpx.AsyncClient(base_url=base, timeout=30)
    # Warm up: the first stream starts the subscription; the first API call loads Django.
    warm = StreamClient(stream_tokens[0])
    await warm.open(port, warehouse_id)
    await api.get(
        "/api/v1/notifications/unread/",
        params={"warehouse": warehouse_id},
        headers={"Authorization": f"Token {poll_tokens[0] if poll_tokens else tokens[0]}"},
    )
    rss_before = _rss_kib(pid)

    started = time.monotonic()
    clients = [StreamClient(t) for t in stream_tokens]
    for i in range(0, len(clients), 50):
        await asyncio.gather(*(c.open(port, warehouse_id) for c in clients[i : i + 50]))
    opened_in = time.monotonic() - started
    await asyncio.sleep(1)
    rss_after = _rss_kib(pid)
    print(f"{len(clients)} streams open in {opened_in:.1f} s (one uvicorn process)")

    published_at: dict[int, float] = {}
    api_times: list[float] = []
    api_statuses: dict[int, int] = {}
    poll_seen: dict[int, list[float]] = {}
    poll_requests = 0
    stop = asyncio.Event()

    async def probe_api() -> None:
        headers = {"Authorization": f"Token {tokens[0]}"}
        while not stop.is_set():
            t0 = time.perf_counter()
            r = await api.get(
                "/api/v1/notifications/", params={"warehouse": warehouse_id}, headers=headers
            )
            api_times.append((time.perf_counter() - t0) * 1000)
            api_statuses[r.status_code] = api_statuses.get(r.status_code, 0) + 1
            await asyncio.sleep(0.2)

    async def poller(token: str) -> None:
        nonlocal poll_requests
        headers = {"Authorization": f"Token {token}"}
        since = None
        await asyncio.sleep(random.uniform(0, args.poll_interval))  # pages open at any time
        while not stop.is_set():
            params = {"warehouse": warehouse_id, "limit": 200}
            if since is not None:
                params["since"] = since
            r = await api.get("/api/v1/notifications/", params=params, headers=headers)
            poll_requests += 1
            now = time.time()
            page = r.json()
            since = page["next_since"]
            for item in page["results"]:
                poll_seen.setdefault(item["cursor"], []).append(now)
            await asyncio.sleep(args.poll_interval)

    cpu_before, client_cpu_before = tree_cpu_seconds(pid), time.process_time()
    probe = asyncio.create_task(probe_api())
    pollers = [asyncio.create_task(poller(t)) for t in poll_tokens]
    await asyncio.sleep(args.poll_interval)  # every poller has its cursor before publishing
    phase_started = time.monotonic()
    for i in range(args.publishes):
        t0 = time.time()
        result = await asyncio.to_thread(
            publish, message_type="REP_NOTICE", warehouse=warehouse_id, title=f"Replenish {i}"
        )
        published_at[result.cursor] = t0
        await asyncio.sleep(args.every)
    await asyncio.sleep(args.poll_interval + 1)  # the slowest poller sees the last publish
    phase = time.monotonic() - phase_started
    cpu = tree_cpu_seconds(pid) - cpu_before
    client_cpu = time.process_time() - client_cpu_before
    stop.set()
    await asyncio.gather(probe, *pollers, return_exceptions=True)

    latencies = [
        (client.arrivals[cursor] - t0) * 1000
        for client in clients
        for cursor, t0 in published_at.items()
        if cursor in client.arrivals
    ]
    expected = len(clients) * len(published_at)
    poll_latencies = [
        (seen - published_at[cursor]) * 1000
        for cursor, times in poll_seen.items()
        if cursor in published_at
        for seen in times
    ]
    pct = _setup.percentile
    print(
        f"server memory: {(rss_after - rss_before) / len(clients):.1f} KiB per open stream "
        f"(RSS {rss_before / 1024:.0f} MiB -> {rss_after / 1024:.0f} MiB)"
    )
    print(
        f"events: {len(latencies)} of {expected} delivered; "
        f"{sum(c.ended for c in clients)} streams ended early"
    )
    print(
        f"publish-to-event latency at the clients: p50 {pct(latencies, 0.5):.0f} ms, "
        f"p99 {pct(latencies, 0.99):.0f} ms, max {max(latencies, default=0):.0f} ms"
    )
    print(
        f"server CPU during the publish phase: {cpu:.1f} s in {phase:.0f} s "
        f"({100 * cpu / phase:.0f}% of one core, with {len(poll_tokens)} pollers and the probe); "
        f"the clients' process used {client_cpu:.1f} s"
    )
    print(
        f"regular API meanwhile (GET /api/v1/notifications/, every 0.2 s): "
        f"p50 {pct(api_times, 0.5):.0f} ms, p99 {pct(api_times, 0.99):.0f} ms, "
        f"statuses {api_statuses}"
    )
    print(
        f"{len(poll_tokens)} clients polling every {args.poll_interval:.0f} s "
        f"({poll_requests} requests): publish-to-seen p50 {pct(poll_latencies, 0.5):.0f} ms, "
        f"p99 {pct(poll_latencies, 0.99):.0f} ms; {len(clients)} pollers would make "
        f"{len(clients) / args.poll_interval:.0f} requests/s for the same"
    )
    slowest = sorted(
        (
            max((c.arrivals.get(cursor, t0) - t0) * 1000 for c in clients),
            _setup.percentile([(c.arrivals.get(cursor, t0) - t0) * 1000 for c in clients], 0.5),
        )
        for cursor, t0 in published_at.items()
    )
    print(
        "per publish, last client reached after (ms): "
        + ", ".join(f"{last:.0f}" for last, _ in sorted(slowest, key=lambda x: x[1]))
        + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    for client in [warm, *clients]:
        client.close()
    await api.aclose()


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _free_port() -> int:
    from devredis.embedded_redis import free_port

    return free_port()


if __name__ == "__main__":
    main()
