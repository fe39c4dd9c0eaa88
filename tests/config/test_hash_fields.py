"""Every kind of field a Lua script writes to a hash is registered for its key family
(config/keyfamilies.py, `KeyFamily.fields`), and the docs' field table is the registry's.

The writes are read from the scripts themselves (every .lua file of the project, preludes
included), not listed by hand: each `redis.call` of HSET, HSETNX, HMSET, HINCRBY,
HINCRBYFLOAT or HDEL, and each call of a local function that passes its parameters on to one
(`add_word(hash_key, field, word)`, `flap_save(flaps_key, field, ...)`, `drop(key, fields)`).
A field's expression becomes its shape: literal text where the script writes literal text, a
value where it concatenates one (`'v:' .. user` is `v:<value>`); a local variable or a table the
script fills is followed to what it was set to (`holders[#holders + 1] = 'm:' .. class`), so
`unpack(holders)` is `m:<value>`. The shape must match one of the family's fields, where a
placeholder stands for one value (or one literal word the script passes in its place).

A key is found the way the scripts name it: `KEYS[K.<name>]` by the read model's layout
(notifications/readmodel/layout.py, the prelude's K), any other `KEYS[n]` by the script's
header line for it, which names the key's builder (`notifications.keys.flaps`) or the last
part of the family's name (`KEYS[3] joined (hash)`).
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pytest
from django.conf import settings

from config import keyfamilies
from notifications.readmodel import layout
from tests.config.test_keyfamilies import SAMPLES

ROOT = Path(settings.BASE_DIR)
SKIPPED_DIRS = {"node_modules", "staticfiles", "var", "site"}
WRITES = {"HSET": "pairs", "HMSET": "pairs", "HSETNX": "one", "HINCRBY": "one"}
WRITES |= {"HINCRBYFLOAT": "one", "HDEL": "all"}
VALUE = "\x00"  # a value in a field's shape
# Hashes of the layout before the read model (upgrade_user.lua empties them): no family.
OLD_LAYOUT = {"watermarks", "snoozers"}
NAME = r"[A-Za-z_]\w*"


def lua_files() -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        found.extend(Path(folder) / name for name in files if name.endswith(".lua"))
    return sorted(found)


@dataclass
class Script:
    """One Lua file: `code` without comments, `masked` the same with strings' contents
    blanked (same positions), so brackets, commas and keywords are found in `masked` and
    expressions read from `code`."""

    path: Path
    text: str
    code: str = ""
    masked: str = ""
    functions: list[tuple[str, list[str], int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        code, masked, i, text = [], [], 0, self.text
        while i < len(text):
            if text.startswith("--", i):
                end = text.find("\n", i)
                end = len(text) if end < 0 else end
                code.append(" " * (end - i))
                masked.append(" " * (end - i))
                i = end
            elif text[i] in "'\"":
                end = i + 1
                while end < len(text) and text[end] != text[i]:
                    end += 2 if text[end] == "\\" else 1
                code.append(text[i : end + 1])
                masked.append(text[i] + "_" * (end - i - 1) + text[i])
                i = end + 1
            else:
                code.append(text[i])
                masked.append(text[i])
                i += 1
        self.code, self.masked = "".join(code), "".join(masked)
        self.functions = self._functions()

    def _functions(self) -> list[tuple[str, list[str], int, int]]:
        """(name, parameters, start, end) of each `local function`, by its blocks' keywords."""
        stack: list[tuple[str, int]] = []
        found = []
        for word in re.finditer(r"\b(function|if|do|repeat|until|end)\b", self.masked):
            kind = word.group()
            if kind in ("function", "if", "do", "repeat"):
                stack.append((kind, word.start()))
            elif stack:
                opener, start = stack.pop()
                head = re.match(rf"function\s+({NAME})\s*\(([^)]*)\)", self.masked[start:])
                before = self.masked[max(0, start - 6) : start]
                if opener == "function" and head and before.strip() == "local":
                    params = [p.strip() for p in head.group(2).split(",") if p.strip()]
                    found.append((head.group(1), params, start, word.end()))
        return found

    def enclosing(self, at: int) -> tuple[str, list[str]] | None:
        """The innermost named local function around position `at`."""
        around = [f for f in self.functions if f[2] <= at < f[3]]
        if not around:
            return None
        name, params, _, _ = max(around, key=lambda f: f[2])
        return name, params

    def line(self, at: int) -> int:
        return self.text.count("\n", 0, at) + 1

    def arguments(self, open_at: int) -> list[tuple[int, int]]:
        """The spans of the top-level arguments of the call whose "(" is at `open_at`."""
        depth, start, spans = 0, open_at + 1, []
        for i in range(open_at, len(self.masked)):
            char = self.masked[i]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    spans.append((start, i))
                    return spans
            elif char == "," and depth == 1:
                spans.append((start, i))
                start = i + 1
        raise AssertionError(f"{self.path}: unclosed call at line {self.line(open_at)}")

    def split(self, start: int, end: int, separator: str) -> list[tuple[int, int]]:
        """Top-level parts of code[start:end] between `separator`s (",", "..")."""
        depth, parts, last, i = 0, [], start, start
        while i < end:
            char = self.masked[i]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            elif depth == 0 and self.masked.startswith(separator, i):
                parts.append((last, i))
                i += len(separator)
                last = i
                continue
            i += 1
        parts.append((last, end))
        return parts

    @cached_property
    def header(self) -> dict[int, str]:
        """KEYS[n] -> what the script's opening comment says of it."""
        said = {}
        for line in self.text.splitlines():
            if not line.startswith("--"):
                break
            for found in re.finditer(r"KEYS\[(\d+)\]\s*(.*?)(?=KEYS\[|$)", line):
                said[int(found.group(1))] = found.group(2)
        return said


# --- What a field is: its shape ---------------------------------------------------------------


def shapes(script: Script, start: int, end: int, depth: int = 0) -> set[str]:
    """The shapes of the expression code[start:end]: its literal text, a value as VALUE."""
    found = {""}
    for s, e in script.split(start, end, ".."):
        found = {a + b for a in found for b in part_shapes(script, s, e, depth)}
    return found


def part_shapes(script: Script, start: int, end: int, depth: int) -> set[str]:
    while script.code[start].isspace():
        start += 1
    while script.code[end - 1].isspace():
        end -= 1
    text = script.code[start:end]
    if depth > 6:
        return {VALUE}
    if text[0] in "'\"" and text[-1] == text[0] and len(text) >= 2:
        return {text[1:-1]}
    if text.startswith("(") and script.arguments(start)[-1][1] == end - 1:
        return shapes(script, start + 1, end - 1, depth)
    if re.fullmatch(NAME, text) and text not in ("KEYS", "ARGV"):
        return traced(script, text, start, depth + 1)
    indexed = re.fullmatch(rf"({NAME})\[[^\]]*\]", text)
    if indexed and indexed.group(1) not in ("KEYS", "ARGV"):
        return set().union(*elements(script, indexed.group(1), depth + 1)) or {VALUE}
    return {VALUE}


def traced(script: Script, name: str, used_at: int, depth: int) -> set[str]:
    """What the local `name` was set to before `used_at` (a parameter: a value)."""
    found: set[str] = set()
    for line in re.finditer(
        r"^[ \t]*(?:local\s+)?((?:\w+\s*,\s*)*\w+)\s*=(?!=)(.*)$", script.masked[:used_at], re.M
    ):
        names = [n.strip() for n in line.group(1).split(",")]
        if name not in names:
            continue
        values = script.split(line.start(2), line.end(2), ",")
        index = names.index(name)
        if index >= len(values):
            found.add(VALUE)
            continue
        s, e = values[index]
        if script.code[s:e].strip() in ("nil", "false", "true") or re.fullmatch(
            r"\s*-?\d+\s*", script.code[s:e]
        ):
            continue
        found |= shapes(script, s, e, depth)
    loops = rf"for\s+((?:\w+\s*,\s*)*\w+)\s+in\s+ipairs\(\s*({NAME})\s*\)"
    for loop in re.finditer(loops, script.masked[:used_at]):
        names = [n.strip() for n in loop.group(1).split(",")]
        if names[1:2] == [name]:
            found |= set().union(*elements(script, loop.group(2), depth)) or {VALUE}
        elif name in names:
            found.add(VALUE)
    return found or {VALUE}


def elements(script: Script, table: str, depth: int) -> list[set[str]]:
    """The shapes of what the script puts in the table `table`, in the order it does."""
    put = rf"(?<![\w.]){table}\[[^\]]*\]\s*=(?!=)(.*)$"
    return [
        shapes(script, found.start(1), found.end(1), depth)
        for found in re.finditer(put, script.masked, re.M)
    ]


def field_shapes(script: Script, kind: str, spans: list[tuple[int, int]]) -> set[str]:
    """The shapes of the fields of a write's arguments after its key."""
    if kind == "one":
        spans = spans[:1]
    unpacked = (
        re.fullmatch(rf"\s*unpack\(\s*({NAME})\s*\)\s*", script.code[spans[0][0] : spans[0][1]])
        if len(spans) == 1
        else None
    )
    if unpacked:
        put = elements(script, unpacked.group(1), 0)
        return set().union(*(put[::2] if kind == "pairs" else put)) or {VALUE}
    if kind == "pairs":
        spans = spans[::2]
    return set().union(*(shapes(script, s, e) for s, e in spans))


# --- The writes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Write:
    script: Script
    at: int
    key: str  # the key's expression
    shapes: frozenset[str]

    def __str__(self) -> str:
        return f"{self.script.path.relative_to(ROOT)}:{self.script.line(self.at)}"


@dataclass(frozen=True)
class Writer:
    """A local function that writes to a hash through its parameters: which one is the key,
    and which the field (None: it writes `shapes` whatever it is passed)."""

    key: int
    field: int | None
    shapes: frozenset[str]
    kind: str


# A call to follow: where, the key's span, and its fields (the write's kind and their spans,
# or the shapes a writer function writes by itself).
Call = tuple[Script, int, tuple[int, int], tuple[str, list[tuple[int, int]]] | frozenset[str]]


def fields_of(
    script: Script, fields: tuple[str, list[tuple[int, int]]] | frozenset[str]
) -> set[str]:
    if isinstance(fields, frozenset):
        return set(fields)
    kind, spans = fields
    return field_shapes(script, kind, spans)


def writes(scripts: list[Script]) -> list[Write]:
    """Every hash write of the scripts, by its key's expression as the caller passes it."""
    calls: list[Call] = []
    for script in scripts:
        for found in re.finditer(r"redis\.p?call\(\s*'(\w+)'", script.code):
            kind = WRITES.get(found.group(1).upper())
            if kind:
                spans = script.arguments(script.code.index("(", found.start()))
                calls.append((script, found.start(), spans[1], (kind, spans[2:])))
    writers: dict[str, Writer] = {}
    done: list[Write] = []
    while calls:
        script, at, key_span, fields = calls.pop()
        key = script.code[key_span[0] : key_span[1]].strip()
        around = script.enclosing(at)
        if around is None or key not in around[1]:
            done.append(Write(script, at, key, frozenset(fields_of(script, fields))))
            continue
        # The key is a parameter of the function around the write: its callers name it.
        name, params = around
        field = None
        named: list[tuple[int, int]] = []
        if isinstance(fields, tuple):
            kind, spans = fields
            named = {"pairs": spans[::2], "one": spans[:1]}.get(kind, spans)
        if len(named) == 1:
            text = script.code[named[0][0] : named[0][1]].strip()
            field = params.index(text) if text in params else None
        made = Writer(
            params.index(key),
            field,
            frozenset() if field is not None else frozenset(fields_of(script, fields)),
            fields[0] if not isinstance(fields, frozenset) else "one",
        )
        if writers.setdefault(name, made) is made:
            calls.extend(callers(scripts, name, made))
    return done


def callers(scripts: list[Script], name: str, writer: Writer) -> list[Call]:
    """The calls of the local function `name`, each a write through `writer`."""
    found: list[Call] = []
    for script in scripts:
        for call in re.finditer(rf"(?<![\w.:])(?<!function ){name}\s*\(", script.masked):
            spans = script.arguments(call.end() - 1)
            fields = writer.shapes if writer.field is None else (writer.kind, [spans[writer.field]])
            found.append((script, call.start(), spans[writer.key], fields))
    return found


# --- Which family a key is --------------------------------------------------------------------


def family_of(script: Script, key: str) -> keyfamilies.KeyFamily | str:
    """The key's family, or a sentence saying why none was found."""
    named = re.fullmatch(rf"KEYS\[K\.({NAME})\]", key)
    if named:
        build = dict(layout.WAREHOUSE).get(named.group(1))
        if build is None:
            return f"K.{named.group(1)} is not in the read model's layout"
        parsed = keyfamilies.parse(build(7, 20_000))
        return parsed.family if parsed else f"{key} is of no family"
    at = re.fullmatch(rf"KEYS\[\s*(\d+|{NAME}(?:\s*\+\s*\d+)?)\s*\]", key)
    if not at:
        return f"{key}: not a KEYS entry"
    said = script.header.get(position(script, at.group(1)), "")
    builder = re.search(r"\b(\w+)\.keys\.(\w+)\b", said)
    if builder:
        build = getattr(importlib.import_module(f"{builder.group(1)}.keys"), builder.group(2))
        names = build.__code__.co_varnames[: build.__code__.co_argcount]
        parsed = keyfamilies.parse(build(*(SAMPLES[n][0] for n in names)))
        return parsed.family if parsed else f"{key}: {builder.group()} builds no family's key"
    words = set(re.findall(r"\w+", said))
    if words & OLD_LAYOUT:
        return "old layout"
    hashes = [
        f
        for f in keyfamilies.families()
        if f.type == "hash" and re.split(r"[:}]", f.template)[-1] in words
    ]
    if len(hashes) == 1:
        return hashes[0]
    return f"{key}: the header says {said!r}, which names no one hash family"


def position(script: Script, expression: str) -> int:
    """The number of a KEYS index: a number, or a local set from FIRST_OWN (+ n)."""
    if expression.isdigit():
        return int(expression)
    name, _, plus = expression.partition("+")
    name = name.strip()
    if name == "FIRST_OWN":
        return layout.FIRST_OWN + int(plus or 0)
    for line in re.finditer(r"^local\s+([\w\s,]+?)\s*=\s*(.*)$", script.code, re.M):
        names = [n.strip() for n in line.group(1).split(",")]
        if name in names:
            value = [v.strip() for v in line.group(2).split(",")][names.index(name)]
            return position(script, value) + int(plus or 0)
    raise AssertionError(f"{script.path}: cannot tell which KEYS entry {expression} is")


def matches(shape: str, pattern: str) -> bool:
    """A field's shape matches a registered pattern: literal text equal, each placeholder one
    value or one literal word (a shape of literal text only matches a pattern of none)."""
    if VALUE not in shape:
        return "<" not in pattern and shape == pattern
    regex = "".join(
        rf"(?:{VALUE}|\w+)" if part.startswith("<") else re.escape(part)
        for part in re.split(r"(<[^>]+>)", pattern)
        if part
    )
    return re.fullmatch(regex, shape) is not None


def shown(shape: str) -> str:
    return shape.replace(VALUE, "<value>")


SCRIPTS = [Script(path, path.read_text(encoding="utf-8")) for path in lua_files()]
WRITTEN = writes(SCRIPTS)


def test_the_scripts_writes_are_found():
    """The parse finds what it must: direct writes, writes through a helper (add_word), a
    field kept in a variable (flap_field) and fields put in a table first (unpack)."""
    found = {(w.script.path.name, w.key, shown(s)) for w in WRITTEN for s in w.shapes}
    assert {
        ("mark_all.lua", "KEYS[K.users]", "v:<value>"),
        ("05_tallies_writes.lua", "KEYS[K.users]", "s:<value>"),
        ("05_tallies_users.lua", "KEYS[K.users]", "r:<value>"),
        ("mark_all.lua", "KEYS[K.classes]", "m:<value>"),
        ("publish.lua", "KEYS[FLAPS]", "<value>|<value>"),
        ("03_notification.lua", "KEYS[K.classes]", "i:<value>"),
        ("send.lua", "KEYS[1]", "last_ms"),
    } <= found
    assert len(WRITTEN) >= 70


@pytest.mark.parametrize("write", WRITTEN, ids=str)
def test_every_field_written_is_registered(write: Write):
    family = family_of(write.script, write.key)
    if family == "old layout":
        return
    assert isinstance(family, keyfamilies.KeyFamily), family
    assert family.type == "hash", f"{family.template} is a {family.type}"
    patterns = [f.pattern for f in family.fields]
    unknown = [shown(s) for s in write.shapes if not any(matches(s, p) for p in patterns)]
    assert not unknown, (
        f"{write} writes {unknown} to {family.template}, whose fields are {patterns}: "
        "register the kind of field in config/keyfamilies.py"
    )


def test_every_hash_says_its_fields():
    for family in keyfamilies.families():
        assert bool(family.fields) == (family.type == "hash"), family.template
        assert all(f.purpose for f in family.fields), family.template


def test_the_docs_field_table_is_the_registrys():
    page = ROOT / "docs" / "architecture" / "keys.md"
    section = page.read_text(encoding="utf-8").split("## Hash fields", 1)[1].split("\n## ", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("|")) + "\n"
    assert table == keyfamilies.markdown_fields(), (
        f"edit the field table in {page.name} (python -m config.keyfamilies prints it)"
    )
