"""`python -m benchmarks` (`make bench`): every row of issues 12's and 22's tables and of SPEC
14-17's (rows 17-22), project vs baseline. (The floor simulation is `python -m benchmarks.floor`.)

Starts what it needs (an embedded Redis, a throw-away SQLite database, gunicorn and uvicorn for
the HTTP and stream rows), measures each row in interleaved rounds against its baseline in the
same run, and prints a markdown table of medians [min-max] and per-round ratios. About 10 minutes
on a 2-core machine; `--quick` about 1; `--only 1-3,9` runs some rows. Rows 14 and 15 also
measure the peer of issue 22, django-notifications-hq, in a venv of its own (benchmarks/peer.py;
`PEER_DATABASE_URL` puts its data in PostgreSQL); `--no-peer` leaves it out.

    python -m benchmarks [--quick] [--only ROWS] [--no-peer] [--write-docs] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

from benchmarks import _setup
from benchmarks.context import PRESETS, Bench
from benchmarks.harness import Line, markdown_table
from benchmarks.probes import RedisProbe

T = TypeVar("T")

ALL_ROWS = [str(i) for i in range(1, 23)]
DOCS = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
START, END = "<!-- bench:results:start -->", "<!-- bench:results:end -->"


def parse_rows(text: str | None) -> set[str]:
    """'1-3,9' -> {'1', '2', '3', '9'}."""
    if not text:
        return set(ALL_ROWS)
    rows: set[str] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        for i in range(int(low), int(high or low) + 1):
            if str(i) not in ALL_ROWS:
                raise SystemExit(f"No row {i}: rows are 1 to {len(ALL_ROWS)}.")
            rows.add(str(i))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0]
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller sizes, 3 rounds (~1 min)")
    size.add_argument("--tiny", action="store_true", help="sizes of 10, 1 round (the test's)")
    parser.add_argument("--only", metavar="ROWS", help="rows to run, e.g. 1-3,9 (default all)")
    parser.add_argument("--rounds", type=int, help="rounds per row (default: the preset's)")
    parser.add_argument(
        "--no-peer",
        action="store_true",
        help="rows 14-15 without django-notifications-hq (no venv, no peer database)",
    )
    parser.add_argument(
        "--write-docs", action="store_true", help=f"write the table into {DOCS.name}"
    )
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    args = parser.parse_args(argv)
    config = PRESETS["tiny" if args.tiny else "quick" if args.quick else "full"]
    if args.rounds:
        from dataclasses import replace

        config = replace(config, rounds=args.rounds)
    rows = parse_rows(args.only)

    started = time.perf_counter()
    load_before = _load()
    server = _setup.start(settings="benchmarks.settings")
    try:
        bench = Bench(config=config, redis_url=server.url, probe=RedisProbe(server.url))
        header = _header(bench, load_before)
        print(header, flush=True)
        lines = run(bench, rows, with_peer=not args.no_peer)
    finally:
        server.stop()
    elapsed = time.perf_counter() - started
    footer = f"Run took {elapsed:.0f} s; load average at the end {_load()}."
    # Only the full preset's sizes are the goals' sizes: a smoke run prints no verdict.
    table = markdown_table(lines, judged=config.name == "full")
    print()
    print(table)
    print()
    print(footer)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "config": config.name,
                    "rows": sorted(rows),
                    "lines": [x.as_dict() for x in lines],
                },
                indent=1,
            )
        )
    if args.write_docs:
        write_docs(f"{header}\n\n{table}\n\n{footer}")
        print(f"Wrote the table into {DOCS}")
    return 0


def run(bench: Bench, rows: set[str], *, with_peer: bool = True) -> list[Line]:
    from benchmarks import (
        rows_actions,
        rows_chat,
        rows_delivery,
        rows_http,
        rows_inbox,
        rows_notices,
        rows_publish,
        rows_quiet,
        rows_shape,
        rows_sweep,
    )
    from benchmarks.inbox_data import build

    lines: list[Line] = []

    def timed(name: str, step: Callable[[], T]) -> T:
        began = time.perf_counter()
        print(f"{name} …", flush=True)
        found = step()
        print(f"  done in {time.perf_counter() - began:.0f} s", flush=True)
        return found

    def phase(name: str, step: Callable[[], list[Line]]) -> None:
        lines.extend(timed(name, step))

    data = None
    if rows & {"1", "2", "3", "4", "5", "8", "12", "13", "14", "15", "16"}:
        data = timed("inbox data", lambda: build(bench))
    if data is not None:
        if rows & {"1", "2", "3"}:
            phase("rows 1-3: polls over HTTP", lambda: rows_http.run(bench, data, rows))
        if "4" in rows:
            phase("row 4: Redis time per poll", lambda: rows_inbox.redis_per_poll(bench, data))
        if "5" in rows:
            phase("row 5: queries per poll", lambda: rows_inbox.queries_per_poll(bench, data))
        if "8" in rows:
            phase("row 8: mark all read", lambda: rows_inbox.mark_all_read(bench, data))
        if rows & {"12", "13", "14", "15"}:
            phase(
                "rows 12-15: the production shape, sessions, 200 paths",
                lambda: rows_shape.http_rows(bench, data, rows, with_peer=with_peer),
            )
        if "16" in rows:
            phase("row 16: opening streams", lambda: rows_shape.stream_rows(bench, data))
    # The rows that need nothing but the bench: (row, the phase's name, what measures it).
    on_the_bench: list[tuple[str, str, Callable[[Bench], list[Line]]]] = [
        ("6", "row 6: publish", rows_publish.publish_rows),
        ("7", "row 7: memory per delivery", rows_publish.memory_rows),
        ("9", "row 9: chat send", rows_chat.send_rows),
        ("10", "row 10: pending fetch", rows_chat.pending_rows),
        ("11", "row 11: expiry sweep", rows_sweep.sweep_rows),
        ("17", "row 17: pressing an alert action", rows_actions.press_rows),
        ("18", "row 18: reminders and e-mails per tick", rows_actions.followup_rows),
        ("19", "row 19: a notice's roster, an acknowledgement", rows_notices.roster_rows),
        ("20", "row 20: publishing a notice", rows_notices.publish_rows),
        ("21", "row 21: canaries at 1,000 warehouses", rows_delivery.canary_rows),
        ("22", "row 22: the quiet floor's cost", rows_quiet.quiet_rows),
    ]
    for row, name, measure in on_the_bench:
        if row in rows:
            phase(name, partial(measure, bench))
    return sorted(lines, key=lambda line: int(line.row))


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _header(bench: Bench, load_before: str) -> str:
    import django
    from django.db import connection

    info = bench.probe.client.info("server")
    config = bench.config
    return (
        f"`python -m benchmarks` ({config.name}: {config.rounds} rounds) on "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC: {os.cpu_count()} cores, load average "
        f"{load_before} at the start; Python {platform.python_version()}, Django "
        f"{django.get_version()}, Redis {info['redis_version']} (embedded), "
        f"{connection.vendor} database."
    )


def write_docs(results: str) -> None:
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else f"{START}\n{END}\n"
    if START not in text or END not in text:
        raise SystemExit(f"{DOCS} has no {START} … {END} markers to write between.")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOCS.parent.mkdir(exist_ok=True)
    DOCS.write_text(f"{head}{START}\n{results}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
