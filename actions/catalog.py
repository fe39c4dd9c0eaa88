"""The active alert actions of each message type, per process, on the directory's version.

N carries its type's actions on every poll, so they come from memory: a holding
(directory/holdings.py) built from the alert actions and the message types, loaded in one
query when first needed after a change of either, in any process. Each
alert then gets them `fit` to its data: an action whose confirm_field the alert's data lacks
is offered disabled, with the reason (SPEC 14, "Outcomes on the page"), and a press of it is
refused with the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.translation import gettext

from directory import holdings
from notifications.domain import ReadOnlyList


def _language(language: str | None) -> str:
    """The catalog's two languages: "zh-hans" for any Chinese, else "en"."""
    return "zh-hans" if (language or "").lower().startswith("zh") else "en"


def _thing(field: str) -> str:
    """A data key as words: "bin_code" -> "bin code"."""
    return field.replace("_", " ").replace("-", " ").strip() or field


def scannable(data: Mapping[str, Any], field: str) -> str | None:
    """The alert's value of `field` to scan against, None when its data lacks it (absent,
    null or blank): then nothing scanned could ever match."""
    value = data.get(field) if isinstance(data, Mapping) else None
    if value is None:
        return None
    text = str(value)
    return text if text.strip() else None


def unavailable_reason(field: str) -> str:
    """Why an action that scans `field` cannot run on an alert lacking it (active language)."""
    return gettext(
        "This alert does not say which %(thing)s to scan (its data has no “%(field)s”), "
        "so this action cannot run on it."
    ) % {"thing": _thing(field), "field": field}


@dataclass(frozen=True)
class Entry:
    id: int
    type_code: str
    code: str
    label: str
    label_zh: str
    confirm_field: str
    confirm_label: str
    confirm_label_zh: str
    resolves: bool

    def shown(self, language: str | None) -> dict[str, Any]:
        """As N's `actions` lists it, before it is fit to an alert's data (available)."""
        zh = _language(language) == "zh-hans"
        return {
            "code": self.code,
            "label": self.label_zh if zh and self.label_zh else self.label,
            "confirm_field": self.confirm_field or None,
            "confirm_label": self.prompt(language) if self.confirm_field else None,
            "available": True,
            "reason": None,
        }

    def prompt(self, language: str | None) -> str:
        """What the scan field says, in words: the admin's, else "Scan the <field>"."""
        language = _language(language)
        own = self.confirm_label_zh if language == "zh-hans" else self.confirm_label
        if own:
            return own
        with translation.override(language):
            return gettext("Scan the %(thing)s") % {"thing": _thing(self.confirm_field)}


LANGUAGES = ("en", "zh-hans")
# The actions of a type that has none: one list, shared and never changed.
NO_ACTIONS: list[dict[str, Any]] = ReadOnlyList()


@dataclass(frozen=True)
class Catalog:
    by_type: dict[str, tuple[Entry, ...]]
    # N's `actions` of each type in each of the catalog's languages, made once per load (a
    # poll shares these lists, read only: `fit` copies what it changes).
    shown: dict[tuple[str, str], list[dict[str, Any]]]

    @classmethod
    def of(cls, by_type: dict[str, tuple[Entry, ...]]) -> Catalog:
        return cls(
            by_type,
            {
                (type_code, language): [entry.shown(language) for entry in entries]
                for type_code, entries in by_type.items()
                for language in LANGUAGES
            },
        )

    def actions(self, type_code: str, language: str | None) -> list[dict[str, Any]]:
        """N's `actions` for a type, in `language`: always the same list until the catalog is
        loaded again (the answers of unchanged items are kept by it), one for all types without
        any."""
        return self.shown.get((type_code, _language(language)), NO_ACTIONS)

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
                confirm_label=row.confirm_label,
                confirm_label_zh=row.confirm_label_zh,
                resolves=row.resolves,
            )
        )
    return Catalog.of({code: tuple(entries) for code, entries in by_type.items()})


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


def fit(actions: list[dict[str, Any]], data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """N's `actions` for one alert: each whose confirm_field its data lacks, disabled with
    the reason (in the active language). The list itself when nothing changes (most alerts:
    the catalog's shared list, read only)."""
    if not actions:
        return actions
    fitted = None
    for index, action in enumerate(actions):
        field = action["confirm_field"]
        if field and scannable(data, field) is None:
            if fitted is None:
                fitted = list(actions)
            fitted[index] = {**action, "available": False, "reason": unavailable_reason(field)}
    return actions if fitted is None else fitted
