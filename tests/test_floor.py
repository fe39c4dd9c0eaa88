"""The floor simulation (SPEC 16, `python -m benchmarks.floor`) keeps working and keeps its
promises: a tiny shift run as people run it, in its own process with its own servers (Redis
with AOF, gunicorn, uvicorn, a Celery worker and beat), loses no alert and does no action
twice; and the counts that must be 0 can be other than 0.

The shift does not touch the suite's Redis, so the cluster pass has nothing to add.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.floor import figures
from benchmarks.floor.receiver import PATH, Receiver

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_shift(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("floor") / "figures.json"
    command = [
        sys.executable,
        "-m",
        "benchmarks.floor",
        *("--handhelds", "5", "--minutes", "0.3", "--drain", "5", "--rate", "30"),
        *("--web-workers", "1", "--stream-workers", "1", "--worker-concurrency", "1"),
        *("--json", str(out)),
    ]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=240, check=False
    )
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return {"figures": json.loads(out.read_text()), "stdout": done.stdout, "code": done.returncode}


@pytest.mark.single_redis
def test_a_tiny_shift_loses_no_alert_and_does_no_action_twice(tiny_shift):
    found = tiny_shift["figures"]
    assert found["run"]["handhelds_following"] == 5
    assert found["alerts"]["acknowledged"] > 0
    assert found["alerts"]["acknowledged"] == found["alerts"]["published"]
    assert found["publish_to_visible"]["stream"]["count"] > 0
    assert found["lost"] == {"alerts": 0, "pairs": 0, "examples": []}, found["lost"]
    assert found["goals"]["nothing_done_twice"]["value"] == 0
    assert found["actions"]["webhook"]["actions_done_twice"] == 0
    assert found["actions"]["database"]["actions_done_twice"] == 0
    assert tiny_shift["code"] == 0


@pytest.mark.single_redis
def test_the_shift_prints_progress_and_the_figures(tiny_shift):
    stdout = tiny_shift["stdout"]
    assert "5 of 5 handhelds following their warehouse" in stdout
    assert "alerts lost: 0" in stdout
    assert "publish to visible" in stdout
    assert "nothing_done_twice: 0 (goal 0): met" in stdout


def test_an_alert_a_following_handheld_never_had_is_lost():
    alert = {"id": "a1", "warehouse": 1, "created_at": 100.0, "severity": "warning"}
    devices: list[dict] = [
        {"index": 0, "warehouse": 1, "joined_at": 50.0, "seen": {"a1": (100.02, "stream")}},
        {"index": 1, "warehouse": 1, "joined_at": 50.0, "seen": {}},  # missed it: lost
        {"index": 2, "warehouse": 2, "joined_at": 50.0, "seen": {}},  # not its warehouse
        {"index": 3, "warehouse": 1, "joined_at": 120.0, "seen": {}},  # came after the publish
        {"index": 4, "warehouse": 1, "joined_at": None, "seen": {}},  # never followed it
    ]

    seen = figures.visible([alert], devices, windows=[])

    assert seen["lost"]["alerts"] == 1
    [example] = seen["lost"]["examples"]
    assert (example["alert"], example["handheld"], example["had_it"]) == ("a1", 1, 1)
    assert seen["all"]["stream"]["count"] == 1
    assert seen["all"]["stream"]["p50_ms"] == pytest.approx(20.0, abs=0.1)


def test_a_fault_window_keeps_its_alerts_out_of_the_figures_outside_faults():
    alerts = [
        {"id": "a1", "warehouse": 1, "created_at": 100.0, "severity": "warning"},
        {"id": "a2", "warehouse": 1, "created_at": 200.0, "severity": "warning"},
    ]
    device = {
        "index": 0,
        "warehouse": 1,
        "joined_at": 0.0,
        "seen": {"a1": (100.05, "stream"), "a2": (209.0, "replay")},
    }

    seen = figures.visible(alerts, [device], windows=[figures.Window("redis", 195.0, 230.0)])

    assert seen["all"]["any"]["count"] == 2
    assert seen["outside_faults"]["any"]["count"] == 1
    assert seen["outside_faults"]["replay"]["count"] == 0


def test_critical_alerts_claimed_late_or_never_count_against_the_share():
    def critical(name: str, at: float) -> dict:
        return {"id": name, "warehouse": 1, "created_at": at, "severity": "critical"}

    def claim(name: str, at: str) -> dict:
        return {"kind": "claim", "status": 200, "alert": name, "claimed_at": at}

    alerts = [critical("fast", 1000.0), critical("slow", 1000.0), critical("never", 1000.0)]
    alerts.append(critical("recent", 1290.0))  # published 10 s before the end: not due
    acts = [
        claim("fast", "1970-01-01T00:16:50.000Z"),  # 1010 s: 10 s after
        claim("slow", "1970-01-01T00:18:50.000Z"),  # 1130 s: 130 s after
        {"kind": "claim", "status": 409, "alert": "never", "claimed_at": None},
    ]

    found = figures.claims(alerts, acts, ended_at=1300.0)

    assert (found["critical"], found["due"], found["claimed_within_120s"]) == (4, 3, 1)
    assert found["share"] == pytest.approx(1 / 3)
    assert {late["alert"] for late in found["late_or_unclaimed"]} == {"slow", "never"}


def test_the_receiver_counts_a_second_run_of_one_action_as_done_twice(tmp_path):
    receiver = Receiver(tmp_path, busy_share=0.0, seed=1)
    receiver.secret = "s" * 64
    try:

        def call(run: str, notification: str) -> int:
            body = json.dumps(
                {"run": run, "action": "task-created", "notification": {"id": notification}}
            )
            data = body.encode()
            signature = (
                "sha256=" + hmac.new(receiver.secret.encode(), data, hashlib.sha256).hexdigest()
            )
            status, _ = receiver.handle(
                PATH, {"Idempotency-Key": run, "X-WMS-Signature": signature}, data
            )
            return status

        assert call("run-1", "n1") == 200
        assert call("run-1", "n1") == 200  # the outbox's retry: the same key, done once
        assert call("run-2", "n2") == 200
        assert receiver.figures()["actions_done_twice"] == 0
        assert receiver.figures()["calls_repeated"] == 1
        assert call("run-3", "n2") == 200  # a second run of the same action on n2
        assert receiver.figures()["actions_done_twice"] == 1
        assert receiver.handle(PATH, {"X-WMS-Signature": "sha256=0"}, b"{}")[0] == 401
    finally:
        receiver.stop()
