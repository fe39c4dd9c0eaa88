"""The demo's environment, for a second terminal: `manage.py demo` writes what its processes
run with (SECRET_KEY, REDIS_URL, DATABASE_URL when set) to `var/demo.env`, and `manage.py`
reads it while that demo runs, so `manage.py publish …` beside it needs nothing set by hand.

"While that demo runs" is the whole of "demo mode": the file names the demo's process, and a
file left by a demo that is gone is ignored. Variables already set in the environment (or in
`.env`) always win, so a configured deployment never picks anything up from here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# Where the demo keeps its files (environment, secret key, Redis data); tests move it.
DIR_VARIABLE = "WMS_DEMO_DIR"
PID_VARIABLE = "WMS_DEMO_PID"
# What a second terminal needs to reach the demo's Redis and database and to start at all.
SHARED = ("SECRET_KEY", "REDIS_URL", "DATABASE_URL", "CELERY_BROKER_URL")


def demo_dir() -> Path:
    return Path(os.environ.get(DIR_VARIABLE) or BASE_DIR / "var")


def env_file() -> Path:
    return demo_dir() / "demo.env"


def write_demo_environment(values: Mapping[str, str], *, pid: int | None = None) -> Path:
    """Write the demo's environment (readable by its owner only: it holds the secret key)."""
    path = env_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{PID_VARIABLE}={os.getpid() if pid is None else pid}"]
    lines += [f"{name}={values[name]}" for name in SHARED if values.get(name)]
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(temporary, path)  # a reader sees the old file or the new one, never half
    return path


def remove_demo_environment() -> None:
    env_file().unlink(missing_ok=True)


def read_demo_environment() -> dict[str, str]:
    """The running demo's variables; empty when there is no file or its demo is gone."""
    try:
        text = env_file().read_text()
    except OSError:
        return {}
    values = dict(
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")
    )
    try:
        pid = int(values.pop(PID_VARIABLE, ""))
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except PermissionError:
        pass  # it exists, under another user
    except (ValueError, ProcessLookupError):
        return {}
    return values


def _configured_in_dot_env(name: str) -> bool:
    try:
        text = (BASE_DIR / ".env").read_text()
    except OSError:
        return False
    return any(line.strip().startswith(f"{name}=") for line in text.splitlines())


def apply_demo_environment() -> bool:
    """In a terminal beside a running demo whose SECRET_KEY is not configured otherwise, take
    the demo's variables for those not set. Returns whether it did."""
    if os.environ.get("SECRET_KEY") or _configured_in_dot_env("SECRET_KEY"):
        return False
    values = read_demo_environment()
    for name, value in values.items():
        if not os.environ.get(name) and not _configured_in_dot_env(name):
            os.environ[name] = value
    return bool(values)
