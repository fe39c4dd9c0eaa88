# ruff: noqa: E501  (each row is the docs' key table's row, read best whole)
"""The Redis key families of the directory (sessions and its per-process cache version), in the one registry (config/keyfamilies.py
finds this module in every installed app). Their names are built in directory/keys.py."""

from __future__ import annotations

from config.keyfamilies import KeyFamily

FAMILIES: tuple[KeyFamily, ...] = (
    KeyFamily(
        "wms:directory:version",
        "string",
        "random token, deleted on every change of a model something held per process is built from (directory/holdings.py: users, groups, memberships, permissions, tokens, warehouses, message types, shifts, alert actions); the next reader puts a new one",
        "directory/cache.py",
    ),
    KeyFamily(
        "wms:cache:<id>:django.contrib.sessions.cached_db<session key>",
        "string",
        "a browser's session (Django's `cached_db` store, through the cache; `<id>` is the cache's key version, 1): expires with the session, and the `django_session` row is its durable copy",
        "directory/sessions.py (Django)",
    ),
)
