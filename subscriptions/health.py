"""The subscription mirror's part of /healthz (config/health.py): `mirror` is degraded while
subscriber sets are being rebuilt from the database."""

from __future__ import annotations

from . import store


def mirror() -> str:
    """What is being rebuilt now ("" when nothing is): publishing to it waits or answers 503."""
    rebuilding = store.rebuilding()
    return f"subscriber sets being rebuilt from the database: {rebuilding}" if rebuilding else ""
