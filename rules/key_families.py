# ruff: noqa: E501  (each row is the docs' key table's row, read best whole)
"""The Redis key families of rules, in the one registry (config/keyfamilies.py
finds this module in every installed app). Their names are built in rules/keys.py."""

from __future__ import annotations

from config.keyfamilies import Field, KeyFamily, W

FAMILIES: tuple[KeyFamily, ...] = (
    KeyFamily(
        f"{W}:rule:<rule id>:alerts",
        "hash",
        "alert key → id of the notification a rule last raised for it (re-raised by a reminder, resolved when the key clears)",
        "rules/store.py",
        fields=(Field("<alert key>", "id of the notification the rule last raised for it"),),
    ),
    KeyFamily(
        f"{W}:rule:<rule id>:sent",
        "hash",
        "de-duplication of one rule in the warehouse: alert key → ms it was sent (negative while a run is publishing it); expires after the cool-down",
        "rules/lua/dedup.lua",
        fields=(Field("<alert key>", "ms it was sent (negative while a run publishes it)"),),
    ),
    KeyFamily(
        "wms:rules:<rule id>:lock",
        "string",
        "token of the run holding the rule (`SET NX EX`), so overlapping beat ticks skip it",
        "rules/store.py",
    ),
    KeyFamily(
        "wms:rules:last_run",
        "hash",
        "rule id → ms its last run started (Python rules' schedule; SQL rules keep `last_run_at` in the database)",
        "rules/store.py",
        fields=(Field("<rule id>", "ms its last run started"),),
    ),
)
