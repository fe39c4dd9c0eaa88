"""The active alert actions of each message type, per process, on the directory's version.

N carries its type's actions on every poll, so they come from memory: a holding
(directory/holdings.py) built from the alert actions and the message types, loaded in one
query when first needed after a change of either, in any process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import translation

from directory import holdings


@dataclass(frozen=True)
class Entry:
    id: int
    type_code: str
    code: str
    label: str
    label_zh: str
    confirm_field: str
    resolves: bool

    def shown(self, language: str | None) -> dict[str, Any]:
        """As N's `actions` lists it."""
        zh = (language or "").lower().startswith("zh") and self.label_zh
        return {
            "code": self.code,
            "label": self.label_zh if zh else self.label,
            "confirm_field": self.confirm_field or None,
        }


@dataclass(frozen=True)
class Catalog:
    by_type: dict[str, tuple[Entry, ...]]
    # (type code, language) -> N's `actions` list, made once (answers share it: read only).
    shown: dict[tuple[str, str], list[dict[str, Any]]]

    def actions(self, type_code: str, language: str | None) -> list[dict[str, Any]]:
        entries = self.by_type.get(type_code)
        if not entries:
            return []
        key = (type_code, "zh" if (language or "").lower().startswith("zh") else "en")
        found = self.shown.get(key)
        if found is None:
            found = [entry.shown(key[1]) for entry in entries]
            self.shown[key] = found
        return found

    def with_code(self, code: str) -> dict[str, Entry]:
        """The active actions with this code, by their message type's code."""
        return {
            type_code: entry
            for type_code, entries in self.by_type.items()
            for entry in entries
            if entry.code == code
        }

    def find(self, type_code: str, code: str) -> Entry | None:
        for entry in self.by_type.get(type_code, ()):
            if entry.code == code:
                return entry
        return None


def _load() -> Catalog:
    from .models import AlertAction

    by_type: dict[str, list[Entry]] = {}
    rows = AlertAction.objects.filter(is_active=True).select_related("message_type")
    for row in rows.order_by("message_type__code", "id"):
        by_type.setdefault(row.message_type.code, []).append(
            Entry(
                id=row.pk,
                type_code=row.message_type.code,
                code=row.code,
                label=row.label,
                label_zh=row.label_zh,
                confirm_field=row.confirm_field,
                resolves=row.resolves,
            )
        )
    return Catalog({code: tuple(entries) for code, entries in by_type.items()}, {})


CATALOG = holdings.declare(
    "actions.catalog", models=("actions.AlertAction", "subscriptions.MessageType"), load=_load
)


def current() -> Catalog:
    """The catalog of the directory's current version (loaded once per version)."""
    return CATALOG.get()


def actions_of(type_code: str) -> list[dict[str, Any]]:
    """N's `actions` for a type, in the active language (may read the directory's version)."""
    return current().actions(type_code, translation.get_language())


def actions_now(type_code: str) -> list[dict[str, Any]] | None:
    """The same from what this process holds now, reading nothing; None when it holds no
    catalog (never loaded here, or dropped by a change since)."""
    held = CATALOG.now()
    if held is None:
        return None
    return held.actions(type_code, translation.get_language())
