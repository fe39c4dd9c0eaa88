"""The benchmark's peer (django-notifications-hq) is optional: when it is skipped and why, and
that its venv is made once per requirements file. Nothing here builds a venv or reaches pip.
Its PostgreSQL server script runs for real where the machine has PostgreSQL's binaries."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchmarks import peer, peer_venv
from benchmarks.context import FULL, QUICK, TINY, Bench
from benchmarks.peer_postgres import find_bin
from devredis.embedded_redis import free_port


def test_the_peer_is_skipped_for_the_tiny_preset_and_by_no_peer():
    assert peer.skip_reason(TINY, enabled=True) == "the tiny preset measures no peer"
    assert peer.skip_reason(FULL, enabled=False) == "--no-peer"
    assert peer.skip_reason(FULL, enabled=True) is None
    assert peer.skip_reason(QUICK, enabled=True) is None


@pytest.fixture
def venv_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("django-notifications-hq==1.8.3\n")
    venv = tmp_path / "venv"
    monkeypatch.setattr(peer_venv, "ROOT", tmp_path)
    monkeypatch.setattr(peer_venv, "REQUIREMENTS", requirements)
    monkeypatch.setattr(peer_venv, "HOME", tmp_path)
    monkeypatch.setattr(peer_venv, "VENV", venv)
    monkeypatch.setattr(peer_venv, "STAMP", venv / "requirements.sha256")
    return tmp_path


def test_a_venv_made_from_the_same_requirements_is_reused(venv_home, monkeypatch):
    calls: list[list[str]] = []

    def run(args, **kwargs):
        calls.append(args)
        if "venv" in args:
            peer_venv.python_path().parent.mkdir(parents=True)
            peer_venv.python_path().write_text("")
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(subprocess, "run", run)
    logged: list[str] = []
    first = peer_venv.ensure(logged.append)
    assert len(calls) == 2  # venv, then pip install -r
    assert logged  # the first time says what it does
    assert peer_venv.ensure(logged.append) == first
    assert len(calls) == 2
    (venv_home / "requirements.txt").write_text("django-notifications-hq==1.8.2\n")
    peer_venv.ensure(logged.append)
    assert len(calls) == 4  # another requirements file: made again


def test_a_venv_that_cannot_be_made_skips_the_peer_with_its_reason(venv_home, monkeypatch):
    def run(args, **kwargs):
        raise subprocess.CalledProcessError(1, args, "", "No matching distribution found")

    monkeypatch.setattr(subprocess, "run", run)
    logged: list[str] = []
    bench = Bench(config=FULL, redis_url="redis://unused", probe=None)  # type: ignore[arg-type]
    monkeypatch.setattr(bench, "log", logged.append)
    assert peer.start(bench) is None
    assert "could not be made" in logged[-1]
    assert "No matching distribution found" in logged[-1]


def _has_postgres() -> bool:
    """PostgreSQL's binaries, and (run by root) the `postgres` user the server runs as."""
    try:
        find_bin(None)
    except SystemExit:
        return False
    return os.geteuid() != 0 or (shutil.which("runuser") is not None and _has_user("postgres"))


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _peer_postgres(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "benchmarks.peer_postgres", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=peer_venv.ROOT)


@pytest.mark.skipif(
    not _has_postgres(), reason="no PostgreSQL binaries (or no postgres user for root)"
)
def test_peer_postgres_makes_a_server_once_and_reuses_it():
    # Not pytest's tmp_path: run by root, the server runs as `postgres`, which must reach it.
    parent = Path(tempfile.mkdtemp(prefix="peer-pg-"))
    parent.chmod(0o755)
    data, port = parent / "data", str(free_port())
    try:
        first = _peer_postgres("start", "--data", str(data), "--port", port)
        assert first.returncode == 0, first.stderr
        url = f"postgres://bench_peer:bench_peer@127.0.0.1:{port}/bench_peer"
        assert first.stdout == f"export PEER_DATABASE_URL={url}\n"
        assert "making the database bench_peer" in first.stderr
        # The role logs in over TCP with its password, to its own database.
        psql = Path(find_bin(None)) / "psql"
        who = subprocess.run(
            [str(psql), url, "-XtAc", "SELECT current_user || ' ' || current_database()"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert who.stdout.strip() == "bench_peer bench_peer", who.stderr
        again = _peer_postgres("start", "--data", str(data), "--port", port)
        assert again.stdout == first.stdout
        assert "already running" in again.stderr
        assert "making" not in again.stderr
        assert _peer_postgres("status", "--data", str(data)).returncode == 0
    finally:
        _peer_postgres("stop", "--data", str(data))
        shutil.rmtree(parent, ignore_errors=True)
    assert _peer_postgres("status", "--data", str(data)).returncode == 3
