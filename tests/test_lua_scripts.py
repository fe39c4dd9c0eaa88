"""Every Lua script in the project: one header style, and every key reaches it through KEYS.

Redis Cluster routes a script call by the keys it declares, so a key a script builds itself
(or receives in ARGV) may live on another node. The header is the script's contract with its
caller: what each KEYS and ARGV entry holds and what it returns.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {"node_modules", "staticfiles", "var"}
# Scripts and preludes, and the parts of a prelude that is a folder (lua/read_model/*.lua).
SCRIPTS = sorted(
    path
    for path in [*ROOT.glob("**/lua/*.lua"), *ROOT.glob("**/lua/*/*.lua")]
    if not any(part.startswith(".") or part in SKIPPED_DIRS for part in path.parts)
)
# What opens with the KEYS/ARGV/Returns header: each script and prelude, and of a prelude that
# is a folder its first part (the others continue it).
HEADED = [path for path in SCRIPTS if path.parent.name == "lua" or path.name.startswith("01_")]
# Commands whose first argument is not a key (PUBLISH's channel is not a key either: Redis
# Cluster broadcasts it to every node).
KEYLESS_COMMANDS = {"TIME", "PUBLISH", "SPUBLISH", "ECHO", "PING"}


def header(path: Path) -> list[str]:
    """The comment lines that open the script (a prelude that is a folder: its first file)."""
    if path.is_dir():
        path = sorted(path.glob("*.lua"))[0]
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("--"):
            break
        lines.append(line)
    return lines


def test_scripts_are_found():
    names = {path.parent.parent.name for path in SCRIPTS}
    assert {"messaging", "readmodel", "rules"} <= names


@pytest.mark.parametrize("path", HEADED, ids=lambda p: str(p.relative_to(ROOT)))
def test_header_names_keys_arguments_and_result(path: Path):
    lines = header(path)
    assert lines, "a script opens with a comment saying what it does"
    assert lines[0][2:].strip(), "the first line says what the script does"
    text = "\n".join(lines)
    assert re.search(r"^-- +KEYS\[", text, re.M), "a line starting with KEYS[...] names the keys"
    assert re.search(r"^-- +ARGV\b", text, re.M), "a line starting with ARGV says what they hold"
    assert re.search(r"^-- +Returns\b", text, re.M), "a line starting with 'Returns' says what"


def helper_parameters(source: str) -> set[str]:
    """Parameter names of the script's local functions whose name says they are keys."""
    names: set[str] = set()
    for params in re.findall(r"local function \w+\(([^)]*)\)", source):
        names.update(p.strip() for p in params.split(",") if p.strip().endswith("key"))
    return names


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_key_comes_through_keys(path: Path):
    source = path.read_text(encoding="utf-8")
    # No key names written into the scripts.
    for fragment in ("wms:", "{wh:", "{chat:", "{user:"):
        assert fragment not in source, fragment
    calls = re.findall(r"redis\.p?call\(\s*['\"](\w+)['\"]\s*,?\s*([^,)]*)", source)
    for command, first_arg in calls:
        if command.upper() in KEYLESS_COMMANDS:
            continue
        # A small helper function may take a key as its parameter (`local function f(key)`),
        # called with a KEYS entry.
        argument = first_arg.strip()
        assert argument.startswith("KEYS[") or argument in helper_parameters(source), (
            command,
            argument,
        )


def composed_scripts() -> list:
    """Every script composed with preludes (config/lua_compose.py), from the modules that
    build them."""
    from config.lua_compose import Composed
    from messaging import store as messaging_store
    from notifications.readmodel import scripts

    found = [*scripts.ALL]
    found += [v for v in vars(messaging_store).values() if isinstance(v, Composed)]
    return found


def preludes_named(path: Path) -> set[str]:
    for line in header(path):
        if line.startswith("-- Preludes:"):
            return {name.strip() for name in line.split(":", 1)[1].split(",")}
    return set()


def test_a_composed_scripts_header_covers_what_its_preludes_take():
    """A script names in its header exactly the preludes it is composed with; one that takes
    the read model's says where its own KEYS and ARGV start (after the warehouse's layout and
    `now`); each prelude says what it takes off the end (`-- Takes:`), and the script uses
    what that prelude gives it."""
    from config.lua_compose import PRELUDES
    from notifications.readmodel import layout

    scripts = composed_scripts()
    assert len(scripts) >= 20
    for script in scripts:
        named = preludes_named(script.path)
        assert named == set(script.preludes), (script.path.name, named, script.preludes)
        text = "\n".join(header(script.path))
        own = script.path.read_text(encoding="utf-8")
        if "read_model" in named:
            assert f"KEYS[1..{layout.FIRST_OWN - 1}] the warehouse" in text, script.path.name
            assert re.search(r"^-- ARGV\[1\] now", text, re.M), script.path.name
        for name in named:
            prelude = PRELUDES[name]
            takes = [line for line in header(prelude.path) if line.startswith("-- Takes:")]
            assert bool(takes) == bool(prelude.keys or prelude.args), name
        if "idempotency" in named:
            assert "idempotency_prior()" in own
            assert "idempotency_store(" in own
        if "version_check" in named:
            assert "directory_moved()" in own
    # Every read-model script file is composed by the loader.
    folder = Path(layout.__file__).resolve().parent / "lua"
    files = {p.name for p in folder.glob("*.lua")}
    assert files == {s.path.name for s in scripts if s.path.parent == folder}


def test_a_script_takes_of_a_folder_prelude_the_definitions_it_uses_and_no_other():
    """A read-model script is composed with the prelude's top-level definitions that define
    what it calls (and what those call), not the whole folder nor whole files: every name the
    composed text uses that some definition of the folder defines is defined by one it took,
    and what it took defines something the composed text uses."""
    from config.lua_compose import PRELUDES

    parts = PRELUDES["read_model"].parts
    assert len(parts) >= 18
    blocks = [(part.name, block) for part in parts for block in part.blocks]
    assert len(blocks) > 3 * len(parts)
    took: dict[str, set[str]] = {}
    for script in composed_scripts():
        if "read_model" not in script.preludes:
            continue
        taken = [(name, block) for name, block in blocks if block.text in script.source]
        took[script.path.name] = {name for name, _ in taken}
        defined = set().union(*(block.defines for _, block in taken))
        text = re.sub(r"--[^\n]*", " ", script.source)
        for name, block in blocks:
            used = {n for n in block.defines if re.search(rf"\b{n}\b", text)}
            if any(block is b for _, b in taken):
                # Taken: the composed text calls what it defines (besides defining it).
                assert any(len(re.findall(rf"\b{n}\b", text)) > 1 for n in block.defines), (
                    script.path.name,
                    name,
                    sorted(block.defines),
                )
                continue
            # A name the script uses that only a definition it did not take defines: missing.
            assert used <= defined, (script.path.name, name, used - defined)
        assert len(taken) < len(blocks)
    assert {"16_pages.lua", "04_read_rule.lua"} <= took["list.lua"]
    assert "16_pages.lua" not in took["record_event.lua"]
    assert all(len(names) < len(parts) for names in took.values())
