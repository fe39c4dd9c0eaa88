# ruff: noqa: E501  (each row is the docs' key table's row, read best whole)
"""The Redis key families of the subscription mirror, in the one registry (config/keyfamilies.py
finds this module in every installed app). Their names are built in subscriptions/keys.py."""

from __future__ import annotations

from config.keyfamilies import KeyFamily, W

FAMILIES: tuple[KeyFamily, ...] = (
    KeyFamily(
        f"{W}:subs:<type id>",
        "set",
        "subscriber ids `u:<user id>` / `r:<group id>`",
        "subscriptions/store.py",
    ),
    KeyFamily(
        f"{W}:subs:<type id>:token",
        "string",
        '`<member count>:<random hex>`, rewritten with every write of the set, an empty one too: missing means "not mirrored"',
        "subscriptions/store.py",
    ),
    KeyFamily(
        f"{W}:subs:<type id>:ver",
        "string",
        "version counter a writer increments before reading the database; a write lands only while it holds the writer's number",
        "subscriptions/store.py",
    ),
    KeyFamily(
        "wms:mirror:rebuilding",
        "string",
        "what some process is rebuilding of the subscription mirror, and since when (expires after 120 s if that process dies); `/healthz` reports it",
        "subscriptions/store.py",
    ),
)
