# ruff: noqa: E501  (each row is the docs' key table's row, read best whole)
"""The Redis key families of the delivery objective, in the one registry (config/keyfamilies.py
finds this module in every installed app). Their names are built in delivery/keys.py."""

from __future__ import annotations

from config.keyfamilies import Field, KeyFamily, W

FAMILIES: tuple[KeyFamily, ...] = (
    KeyFamily(
        f"{W}:canary:sent",
        "sorted set",
        "canary token → when it was published (ms, Redis's clock); the last hour",
        "delivery/lua/start.lua",
    ),
    KeyFamily(
        f"{W}:canary:arrived",
        "hash",
        "`<token>:stream` / `<token>:poll` → ms from the canary's publish to its arrival on that path",
        "delivery/lua/arrive.lua, delivery/lua/start.lua (removes)",
        fields=(
            Field(
                "<token>:<path>",
                "ms from the canary's publish to its arrival on that path (`stream` or `poll`)",
            ),
        ),
    ),
    KeyFamily(
        "wms:delivery:streams",
        "sorted set",
        "`<host>:<pid>` of each process that serves streams → its last beat (ms); beats older than an hour are dropped",
        "delivery/store.py (from the stream hub)",
    ),
    KeyFamily(
        "wms:delivery:checked",
        "string",
        "the last delivery check as JSON (`at`, the codes of the warehouses `late` and `missing`); `/healthz` reads it",
        "delivery/store.py",
    ),
)
