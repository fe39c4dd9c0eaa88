"""`python -m benchmarks` keeps working: every row of the table, at sizes of 10 and one round.

The harness runs as people run it, in its own process (its own embedded Redis, SQLite file and
gunicorn), so this checks the command end to end without touching the suite's Redis. It asserts
that each row produced figures, not what they are: timing goals live in docs/performance.md.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.__main__ import ALL_ROWS, parse_rows
from benchmarks.harness import (
    Line,
    Measure,
    Verdict,
    at_least,
    at_most,
    interleave,
    markdown_table,
    paired,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("bench") / "figures.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--tiny", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"figures": json.loads(out.read_text()), "stdout": done.stdout}


def test_every_row_of_the_issue_produces_figures(tiny_run):
    lines = tiny_run["figures"]["lines"]
    assert {line["row"] for line in lines} == set(ALL_ROWS)
    for line in lines:
        median = line["project"]["median"]
        assert isinstance(median, float), line
        assert math.isfinite(median), line
        if line["baseline"] is not None:
            assert math.isfinite(line["baseline"]["median"]), line
        if line["ratio"] is not None:
            assert line["ratio"]["values"], line


def test_rows_with_a_baseline_compare_it_in_the_same_run(tiny_run):
    lines = tiny_run["figures"]["lines"]
    compared = {line["row"] for line in lines if line["baseline"] and line["ratio"]}
    # Rows 5 (queries), 11 (sweep), 18 (a tick) and 19 (a roster's queries) have goals but
    # nothing to compare with.
    assert compared == set(ALL_ROWS) - {"5", "11", "18", "19"}


def test_the_table_is_printed(tiny_run):
    stdout = tiny_run["stdout"]
    assert "| row | work | project | baseline | ratio | goal | met? (not judged: smoke run) |" in (
        stdout
    )
    assert stdout.count("\n| ") >= len(ALL_ROWS) + 1


def test_a_smoke_run_prints_no_verdict(tiny_run):
    """The small presets' figures are not the goals' sizes: no row says yes or no there."""
    table = [row for row in tiny_run["stdout"].splitlines() if row.startswith("| ")][2:]
    assert len(table) >= len(ALL_ROWS)
    for row in table:
        assert row.rstrip().endswith("| — |"), row


def test_a_verdict_is_taken_on_the_whole_range():
    def ratio(*values: float) -> Measure:
        return Measure("x", list(values))

    assert at_least(ratio(0.72, 0.75, 0.8), 0.7) is Verdict.MET
    assert at_least(ratio(0.55, 0.6, 0.69), 0.7) is Verdict.MISSED
    # The median meets it, but one round did not: the run cannot tell.
    assert at_least(ratio(0.65, 0.75, 0.8), 0.7) is Verdict.UNDECIDED
    assert at_most(ratio(1.2, 1.4), 1.5) is Verdict.MET
    assert at_most(ratio(1.6, 1.7), 1.5) is Verdict.MISSED
    assert at_most(ratio(1.4, 1.6), 1.5) is Verdict.UNDECIDED
    assert at_least(ratio(), 0.7) is None
    line = Line(row="2", work="w", project=Measure("ms", [1.0]), ratio=ratio(0.65, 0.8))
    line.met = at_least(ratio(0.65, 0.8), 0.7)
    assert markdown_table([line]).endswith("| not distinguishable |")
    assert markdown_table([line], judged=False).endswith("| — |")


def test_rounds_are_interleaved_and_rotate():
    order: list[str] = []
    results = interleave(3, {"a": lambda: order.append("a"), "b": lambda: order.append("b")})
    assert order == ["a", "b", "b", "a", "a", "b"]
    assert len(results["a"]) == len(results["b"]) == 3


def test_ratios_are_paired_per_round_and_shown_with_their_range():
    ratio = paired([10.0, 30.0, 20.0], [10.0, 10.0, 10.0])
    assert ratio.values == [1.0, 3.0, 2.0]
    assert ratio.text() == "2.00x [1.00\N{EN DASH}3.00]"
    line = Line(row="1", work="w", project=Measure("ms", [1.0]), ratio=ratio, goal="≥ 2x")
    assert "| 1 | w | 1 ms | — | 2.00x [1.00\N{EN DASH}3.00] | ≥ 2x | — |" in markdown_table([line])


def test_rows_are_chosen_by_number_and_range():
    assert parse_rows("1-3,9") == {"1", "2", "3", "9"}
    assert parse_rows(None) == set(ALL_ROWS)
    with pytest.raises(SystemExit):
        parse_rows("99")


@pytest.fixture
def probe(redis_server):
    from benchmarks.probes import RedisProbe, wire

    probe = RedisProbe(redis_server.url)
    yield probe
    wire.uninstall()


@pytest.mark.single_redis  # packs commands with one server's connection
def test_command_names_are_read_from_what_redis_py_sends(redis):
    from benchmarks.probes import command_names

    pipe = redis.pipeline(transaction=True)
    pipe.zadd("k", {"a\r\n*1\r\n$4\r\nPING": 1})  # RESP inside a value is skipped
    pipe.hmget("h", ["x", "y"])
    packed = b"".join(
        bytes(chunk)
        for chunk in redis.connection_pool.make_connection().pack_commands(
            [args for args, _ in pipe.command_stack]
        )
    )
    assert list(command_names(packed)) == ["ZADD", "HMGET"]


def test_redis_time_counts_a_script_once_and_pipelined_commands_each(probe, redis):
    script = redis.register_script(
        "for i = 1, 200 do redis.call('ZADD', KEYS[1], i, i) end return 1"
    )
    with probe.listening():
        script(keys=["scripted"])  # loads the script: not what is measured
        probe.reset()
        script(keys=["scripted"])
        by_script = probe.read()
        pipe = redis.pipeline(transaction=True)
        for i in range(200):
            pipe.zadd("pipelined", {str(i): i})
        pipe.execute()
        by_pipeline = probe.read()
    # One EVALSHA: the 200 ZADDs it ran are inside its time, not counted again.
    assert by_script.calls == 1
    assert set(by_script.by_command) == {"EVALSHA"}
    assert by_script.total_us == by_script.by_command["EVALSHA"] > 0
    # 200 ZADDs sent by the client, each counted (MULTI and EXEC only contain them).
    assert by_pipeline.calls == 200
    assert set(by_pipeline.by_command) == {"ZADD"}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")
def test_rows_13_to_15_say_what_a_request_costs_in_cpu_by_process(tiny_run):
    """Throughput on a busy 2-core machine is CPU per request: each comparison says how much
    of it the server's workers, Redis and the load generator took, for both sides."""
    compared = [line for line in tiny_run["figures"]["lines"] if line["row"] in {"13", "14", "15"}]
    by_floor = [line for line in compared if line["baseline_name"].startswith(("floor", "token"))]
    assert by_floor
    for line in by_floor:
        assert line["note"].startswith("CPU per request: "), line
        assert line["note"].count("(server ") == 2, line
        assert ", Redis " in line["note"], line
        assert ", load generator " in line["note"], line


def test_row_14_splits_the_summary_against_the_floor_in_three(tiny_run):
    """The floor plus a PING, then plus the read model's call instead, then the summary: three
    explaining lines whose ratios, round by round, multiply to the summary's against the floor."""
    lines = [line for line in tiny_run["figures"]["lines"] if line["row"] == "14"]

    def one(work: str, baseline_name: str) -> dict:
        [found] = [
            line
            for line in lines
            if line["work"].startswith(work) and line["baseline_name"] == baseline_name
        ]
        return found

    summary = "unread summary, 200 path (stale ETag), session cookie"
    whole = one(summary, "floor (session)")
    parts = [
        one("the floor plus one Redis round trip (PING)", "floor (session)"),
        one("the floor plus the summary's read-model call instead", "floor + PING (session)"),
        one(summary, "floor + read model (session)"),
    ]
    assert whole["met"] is not None
    for part in parts:
        assert part["met"] is None, part
        assert part["goal"].startswith("— ("), part
    for i, value in enumerate(whole["ratio"]["values"]):
        product = math.prod(part["ratio"]["values"][i] for part in parts)
        assert product == pytest.approx(value, rel=1e-9)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")
def test_a_process_trees_cpu_counts_its_own_and_its_childrens():
    from benchmarks.probes import tree_cpu_seconds

    before = tree_cpu_seconds(os.getpid())
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    assert tree_cpu_seconds(os.getpid()) > before
    # A child (a server's worker) that spins for a while, then waits to be stopped.
    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    child = subprocess.Popen([sys.executable, "-c", spin + "time.sleep(60)"])
    try:
        mine = tree_cpu_seconds(os.getpid()) - tree_cpu_seconds(child.pid)
        deadline = time.monotonic() + 30
        while tree_cpu_seconds(child.pid) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.01)  # polling the child's CPU: the condition awaited
        assert tree_cpu_seconds(child.pid) >= 0.3
        assert tree_cpu_seconds(os.getpid()) >= mine + 0.3
    finally:
        child.kill()
        child.wait()


@pytest.mark.single_redis  # reads the one server's INFO
def test_redis_cpu_is_what_the_server_spent(redis):
    from benchmarks.probes import redis_cpu_seconds

    before = redis_cpu_seconds(redis)
    redis.eval("local i = 0 while i < 5000000 do i = i + 1 end return i", 0)
    assert redis_cpu_seconds(redis) > before
