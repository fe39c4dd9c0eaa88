"""The peer's own venv: django-notifications-hq installs a top-level `notifications` package, as
the project does, so the peer never runs in the project's venv (issue 22).

Made on demand at var/bench-peer/venv with `python -m venv` and pip (as pip is configured on
the machine), from the pinned benchmarks/peer_site/requirements.txt, and reused while that file
is unchanged: the venv keeps the SHA-256 of the file it was made from.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "benchmarks" / "peer_site"
REQUIREMENTS = SITE / "requirements.txt"
HOME = ROOT / "var" / "bench-peer"
VENV = HOME / "venv"
STAMP = VENV / "requirements.sha256"


class PeerUnavailable(Exception):
    """The peer's venv could not be made (no network, no such release, …): skip the peer."""


def python_path() -> Path:
    return VENV / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _digest() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()


def _run(args: list[str], what: str) -> None:
    try:
        subprocess.run(args, check=True, capture_output=True, text=True, timeout=900)
    except subprocess.CalledProcessError as failed:
        tail = (failed.stdout + failed.stderr).strip()[-1500:]
        raise PeerUnavailable(f"{what} failed:\n{tail}") from failed
    except (OSError, subprocess.TimeoutExpired) as failed:
        raise PeerUnavailable(f"{what} failed: {failed}") from failed


def ensure(log: Callable[[str], None]) -> Path:
    """The peer venv's Python, after making the venv if it is missing or out of date."""
    python = python_path()
    digest = _digest()
    if python.exists() and STAMP.exists() and STAMP.read_text().strip() == digest:
        return python
    log(f"making the peer's venv at {VENV.relative_to(ROOT)} (once; about a minute)")
    shutil.rmtree(VENV, ignore_errors=True)
    HOME.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", str(VENV)], "python -m venv")
    log(f"installing {REQUIREMENTS.relative_to(ROOT)} into it")
    _run(
        [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
        "pip install",
    )
    # Written last: a venv whose install was cut short is made again next time.
    STAMP.write_text(digest + "\n")
    log("the peer's venv is ready")
    return python
