"""The demo's SECRET_KEY: made once and kept in var/, so `manage.py demo` runs from a fresh
clone while the project itself refuses to start without a key (DEBUG off)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from demo.environment import demo_dir


def ensure_demo_secret_key(path: Path | None = None) -> str:
    """SECRET_KEY from the environment if set; else the demo's own, created on first use
    (readable by its owner only). Sets the environment variable, which the demo's processes
    (web, worker, beat) inherit."""
    key = os.environ.get("SECRET_KEY", "")
    path = path or demo_dir() / "demo-secret-key"
    if not key:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(50))
        key = path.read_text().strip()
        os.environ["SECRET_KEY"] = key
    return key
