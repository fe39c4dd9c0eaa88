"""The benchmark's peer (django-notifications-hq) is optional: when it is skipped and why, and
that its venv is made once per requirements file. Nothing here builds a venv or reaches pip."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks import peer, peer_venv
from benchmarks.context import FULL, QUICK, TINY, Bench


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
