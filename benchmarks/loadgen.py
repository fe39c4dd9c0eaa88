"""A small HTTP load generator: N connections, each sending one request after the other.

Plain asyncio streams and hand-written HTTP/1.1, so it costs the client little CPU (it shares
the 2 cores with the server) and needs nothing installed. A connection the server closes
(gunicorn's sync workers close after every response) is opened again, and the connect time
counts in that request's latency, as it would for a real client of such a server.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class LoadResult:
    requests: int
    seconds: float
    latencies_ms: list[float]
    statuses: Counter[int] = field(default_factory=Counter)
    errors: int = 0

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile_ms(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def request_bytes(path: str, headers: dict[str, str], host: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Accept: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _one(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, payload: bytes
) -> tuple[int, bool]:
    """Send one request and read its response; returns (status, connection closed)."""
    writer.write(payload)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length, close = None, False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection" and value.strip().lower() == "close":
            close = True
    if length is not None:
        await reader.readexactly(length)
    elif status not in (204, 304):
        await reader.read()  # no length: the body runs until the server closes
        close = True
    return status, close


async def _connection(
    host: str, port: int, payload: bytes, deadline: float, result: LoadResult
) -> None:
    reader = writer = None
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection(host, port)
            assert reader is not None
            status, close = await _one(reader, writer, payload)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            result.errors += 1
            if writer is not None:
                writer.close()
            reader = writer = None
            await asyncio.sleep(0.01)
            continue
        result.latencies_ms.append((time.perf_counter() - started) * 1000)
        result.statuses[status] += 1
        result.requests += 1
        if close:
            writer.close()
            reader = writer = None
    if writer is not None:
        writer.close()


async def _run(
    host: str, port: int, payload: bytes, connections: int, seconds: float
) -> LoadResult:
    result = LoadResult(requests=0, seconds=0.0, latencies_ms=[])
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(
        *(_connection(host, port, payload, deadline, result) for _ in range(connections))
    )
    result.seconds = time.perf_counter() - started
    return result


def run(
    *,
    host: str,
    port: int,
    path: str,
    headers: dict[str, str],
    connections: int,
    seconds: float,
) -> LoadResult:
    """Keep `connections` requests in flight against one URL for `seconds`; bounded in time."""
    payload = request_bytes(path, headers, f"{host}:{port}")
    return asyncio.run(_run(host, port, payload, connections, seconds))
