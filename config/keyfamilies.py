# ruff: noqa: E501, RUF001  (each row is the docs' key table's row, read best whole)
"""The one registry of Redis key families: what each key is, who owns it, who writes it.

Each app declares its own families in its `key_families` module (found here in every
installed app, as Django finds `admin` modules) and builds their names in its keys.py (small
typed functions, pinned by tests); the core's few are below. The registry drives:
- parsing a key name into its family and owner (`parse`), which the orphan sweeps use to find
  the keys of deleted warehouses, users, roles, message types and rules (notifications.keys);
- the key table in docs/architecture/keys.md, which `python -m config.keyfamilies` prints and
  tests/docs/test_key_table.py compares with the registry (names and types), and its field
  table (each hash's kinds of field, `fields`), which tests/config/test_hash_fields.py compares
  with the registry and with every field the Lua scripts write;
- a test that every key-building function of every app makes a key of exactly one family.

A new family is one entry in its app's `key_families` and a row in the docs' table (printed by
`python -m config.keyfamilies`); the sweep and the coverage test follow.
Templates are written with the default prefix `wms`; placeholders in angle brackets:
`<id>` a warehouse id, `<user id>`, `<group id>`, `<type id>` (owners the sweep checks),
`<rule id>` (a rule, checked too), `<day>`, `<metric>`, `<type code>`, `<chat id>`, `<task name>`, `<queue>`, `<scope>`
(who made an idempotent request), `<key hash>`.
"""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass
from functools import cache

from django.apps import apps
from django.conf import settings

# Placeholder -> (regex, owner kind or "" when the sweep does not check it).
_PLACEHOLDERS: dict[str, tuple[str, str]] = {
    "<id>": ("[0-9]{1,19}", ""),
    "<user id>": ("[0-9]{1,19}", "user"),
    "<group id>": ("[0-9]{1,19}", "role"),
    "<type id>": ("[0-9]{1,19}", "type"),
    "<rule id>": ("[^{}]+", "rule"),
    "<day>": ("[0-9]{1,10}", ""),
    "<metric>": ("claim|resolve", ""),
    "<type code>": ("[^{}]+", ""),
    "<chat id>": ("[^{}]+", ""),
    "<task name>": (".+", ""),
    "<queue>": ("[^{}]+", ""),
    "<scope>": ("u:[0-9]{1,19}|python", ""),
    "<key hash>": ("[0-9a-f]{32}", ""),
    "<session key>": ("[a-z0-9]{32}", ""),
}
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in _PLACEHOLDERS))


@dataclass(frozen=True)
class Field:
    """One kind of field of a hash: its name's `pattern`, literal text with placeholders in
    angle brackets (`v:<user id>`, `<type code>|<event>`, `layout`), and what it holds."""

    pattern: str
    purpose: str


@dataclass(frozen=True)
class KeyFamily:
    template: str  # e.g. "wms:{wh:<id>}:inbox:u:<user id>"
    type: str  # Redis type: string, hash, set, sorted set, list
    holds: str  # what it holds (the docs' words)
    writers: str  # the code that writes it
    # A hash's kinds of field (tests/config/test_hash_fields.py reads the Lua scripts' writes).
    fields: tuple[Field, ...] = ()

    @property
    def warehouse(self) -> bool:
        """A key of one warehouse (hash tag `{wh:<id>}`): removed with its warehouse."""
        return self.template.startswith("wms:{wh:<id>}:")

    @property
    def owner(self) -> str:
        """Whose data it is beyond its warehouse ("user", "role", "type", "rule" or "")."""
        for found in _PLACEHOLDER.findall(self.template):
            if _PLACEHOLDERS[found][1]:
                return _PLACEHOLDERS[found][1]
        return ""

    def regex(self, prefix: str) -> re.Pattern[str]:
        """The full key name, with `prefix` for `wms`; group 1 the warehouse id (warehouse
        keys), the last group the owner (when it has one)."""
        body = self.template[len("wms") :]
        parts, last = [], 0
        for match in _PLACEHOLDER.finditer(body):
            parts.append(re.escape(body[last : match.start()]))
            parts.append(f"({_PLACEHOLDERS[match.group()][0]})")
            last = match.end()
        parts.append(re.escape(body[last:]))
        return re.compile(re.escape(prefix) + "".join(parts), re.DOTALL)


W = "wms:{wh:<id>}"  # the start of every warehouse key's template

# The core's own families (config/beat.py, config/queues.py); each app's are in its
# `key_families` module.
CORE: tuple[KeyFamily, ...] = (
    KeyFamily(
        "wms:beat:<task name>",
        "string",
        "claim of a periodic task's current tick (`SET NX PX`, 0.9 × its interval), so a second beat cannot run it twice",
        "config/beat.py",
    ),
    KeyFamily(
        "wms:{consumers}:<queue>",
        "string",
        "name of a Celery worker that consumes the queue, written by each such worker every `QUEUE_HEARTBEAT_SECONDS` and expiring after three; `/healthz` names the product's queues without one",
        "config/queues.py",
    ),
)
MODULE = "key_families"


@cache
def families() -> tuple[KeyFamily, ...]:
    """Every family: the core's, then each installed app's `key_families.FAMILIES`, in the
    order of INSTALLED_APPS."""
    found = list(CORE)
    for app in apps.get_app_configs():
        name = f"{app.name}.{MODULE}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as missing:
            if missing.name != name:
                raise
            continue
        found.extend(module.FAMILIES)
    return tuple(found)


@dataclass(frozen=True)
class ParsedKey:
    family: KeyFamily
    warehouse_id: int | None  # warehouse keys only
    owner: str  # the user, role, message type or rule id, "" when the family has no owner


@cache
def _compiled(prefix: str) -> tuple[tuple[KeyFamily, re.Pattern[str]], ...]:
    return tuple((family, family.regex(prefix)) for family in families())


def parse(key: str) -> ParsedKey | None:
    """The family of a key name (with this deployment's prefix), None for no known family."""
    for family, pattern in _compiled(settings.WMS_REDIS_PREFIX):
        found = pattern.fullmatch(key)
        if found is None:
            continue
        groups = found.groups()
        warehouse_id = int(groups[0]) if family.warehouse else None
        owner = groups[-1] if family.owner else ""
        return ParsedKey(family, warehouse_id, owner)
    return None


def markdown_table() -> str:
    """The key table of docs/architecture/keys.md."""
    lines = ["| key | type | holds | written by |", "| --- | --- | --- | --- |"]
    for family in families():
        template = family.template.replace("|", "\\|")
        lines.append(f"| `{template}` | {family.type} | {family.holds} | {family.writers} |")
    return "\n".join(lines) + "\n"


def markdown_fields() -> str:
    """The field table of docs/architecture/keys.md: each hash's kinds of field."""
    lines = ["| hash | field | holds |", "| --- | --- | --- |"]
    for family in families():
        for field in family.fields:
            pattern = field.pattern.replace("|", "\\|")
            purpose = field.purpose.replace("|", "\\|")
            lines.append(f"| `{family.template}` | `{pattern}` | {purpose} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m config.keyfamilies: the docs' key and field tables
    import django

    django.setup()
    sys.stdout.write(markdown_table() + "\n" + markdown_fields())
