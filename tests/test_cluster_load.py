"""`python -m benchmarks.cluster_load` keeps working: a tiny run against its own 3-master cluster.

It runs as people run it, in its own process (its own cluster, broker Redis and SQLite file),
so it touches neither the suite's Redis nor its cluster, and runs in every pass. Warehouses 1,
2 and 3 hash to three different masters ({wh:1} slot 11710, {wh:2} 7645, {wh:3} 3580, on the
launcher's even split of the slots), so three warehouses load every master. It asserts that
per-shard figures come out and that every master did the load's work, not how fast.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.cluster_load import PHASES, format_report
from benchmarks.cluster_shards import spread

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("cluster-load") / "figures.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.cluster_load",
            *("--warehouses", "3", "--operators", "2", "--backlog", "3"),
            *("--seconds", "2", "--processes", "1", "--json", str(out)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"figures": json.loads(out.read_text()), "stdout": done.stdout}


def test_every_master_gets_its_warehouses_and_their_load(tiny_run):
    figures = tiny_run["figures"]
    assert sorted(figures["placement"]) == ["1", "2", "3"]
    assert len(set(figures["placement"].values())) == 3
    for name in PHASES:
        phase = figures["phases"][name]
        assert phase["errors"] == 0, phase["first_errors"]
        shards = phase["shards"]
        assert len(shards) == 3
        for shard in shards:
            assert len(shard["warehouses"]) == 1, shard
            assert shard["keys"] > 0, shard
            assert shard["commands"] > 0, (name, shard)
            assert shard["script_calls"] > 0, (name, shard)
            assert shard["cpu_s"] >= 0, shard
            assert math.isfinite(shard["cpu_share"]), shard
        assert math.isfinite(phase["spread"]["script_calls"]), phase["spread"]


def test_each_phase_does_what_it_says(tiny_run):
    phases = tiny_run["figures"]["phases"]
    assert phases["polls"]["rounds"] > 0
    assert phases["polls"]["publishes"] == 0
    assert phases["publishes"]["publishes"] > 0
    assert phases["publishes"]["rounds"] == 0
    assert phases["mixed"]["rounds"] > 0
    # Caught-up operators polling: one script call per round (the list), nothing new.
    costs = tiny_run["figures"]["costs"]
    assert costs["script_calls_per_round"] == pytest.approx(1.0, abs=0.05)
    assert costs["cpu_us_per_round"] > 0
    assert costs["cpu_us_per_publish"] > 0
    assert "cpu_us_per_reload" in costs


def test_the_report_is_printed(tiny_run):
    stdout = tiny_run["stdout"]
    assert format_report(tiny_run["figures"]) in stdout
    assert "| polls | :" in stdout
    assert "One Redis core:" in stdout


def test_spread_is_max_over_min():
    assert spread([10, 20, 40]) == 4.0
    assert spread([0, 0, 0]) == 1.0
    assert spread([0, 5, 5]) == math.inf
