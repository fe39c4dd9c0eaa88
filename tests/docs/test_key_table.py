"""The key table of docs/architecture/keys.md names exactly the registry's families
(config/keyfamilies.py), each with its Redis type. Only names and types are compared: the rest
of a row is prose (`python -m config.keyfamilies` prints the registry's own wording)."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

from config import keyfamilies

PAGE = Path(settings.BASE_DIR) / "docs" / "architecture" / "keys.md"
ROW = re.compile(r"^\| `(wms[^`]*)` \| ([a-z ]+) \|")


def table() -> list[tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Key families", 1)[1].split("\n## ", 1)[0]
    return [
        (found.group(1), found.group(2).strip())
        for line in section.splitlines()
        if (found := ROW.match(line))
    ]


def test_the_table_names_every_family_once():
    names = [name for name, _ in table()]
    assert len(names) == len(set(names))
    assert set(names) == {family.template for family in keyfamilies.families()}, (
        f"edit the table in {PAGE.name} (python -m config.keyfamilies prints the registry's)"
    )


def test_each_family_has_its_type():
    registry = {family.template: family.type for family in keyfamilies.families()}
    assert {name: kind for name, kind in table() if registry.get(name) != kind} == {}
