"""Lua scripts composed with their preludes by name, built once.

A prelude is a file of helpers a script takes in front of its own text (one chunk, so the
prelude's `local function`s are the script's). Some preludes also take the script's last KEYS
and ARGV (an Idempotency-Key's binding and record, the directory's version): those are taken in
one fixed order, whatever order a script names them in, and the call below appends what each
takes in that same order. So no caller mirrors a nesting order by hand: it names what it
passes (`guard=`, `version=`), and each prelude's own `take` turns that into its KEYS and ARGV.

Each app registers its own preludes (`register`, at the import of the module that owns the
file): this module registers only the core's ("idempotency"), and names no app's file.
Each prelude's header says what it takes with lines starting `-- Takes:`; a script names its
preludes in its header (`-- Preludes: read_model, idempotency`).
tests/test_lua_scripts.py checks that a script's header names exactly the preludes it is
composed with and that its own KEYS/ARGV lines leave room for what they take.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.redis import LuaScript

# What a prelude appends to a script's KEYS and ARGV, from what the caller passes by name
# (the script's file name is for the error when something is missing).
Take = Callable[[str, Mapping[str, Any]], tuple[Sequence[str], Sequence[Any]]]


# A top-level `local function f`, `local a, b = ...` or `local a` (a prelude file defines only
# these at its top level: its lines start unindented), and Lua's comments and strings.
_DEFINED = re.compile(
    r"^local\s+(?:function\s+([A-Za-z_]\w*)|([A-Za-z_][\w\s,]*?)\s*(?:=|$))", re.M
)
_NOT_CODE = re.compile(r"--\[\[.*?\]\]|--[^\n]*|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*")


def _names_used(text: str) -> set[str]:
    return set(_NAME.findall(_NOT_CODE.sub(" ", text)))


@dataclass(frozen=True)
class Block:
    """One top-level definition of a prelude file (a `local function`, a `local` table or
    constant) with the comment lines just above it: the names it defines and those it uses."""

    text: str
    defines: frozenset[str]
    uses: frozenset[str]

    @classmethod
    def of(cls, text: str) -> Block:
        defines = set()
        for function, names in _DEFINED.findall(text):
            defines |= {function} if function else {n.strip() for n in names.split(",")}
        return cls(text, frozenset(defines - {""}), frozenset(_names_used(text)))


def _is_code(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("--")


def _blocks(text: str) -> tuple[Block, ...]:
    """A file's top-level definitions, in order: a new one starts at each unindented `local`
    line once the one before has code, taking the comment lines just above it along."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.split("\n"):
        if _DEFINED.match(line) and any(_is_code(earlier) for earlier in current):
            at = len(current)
            while at > 0 and not _is_code(current[at - 1]):
                at -= 1
            blocks.append(current[:at])
            current = current[at:]
        current.append(line)
    blocks.append(current)
    return tuple(Block.of("\n".join(lines)) for lines in blocks)


@dataclass(frozen=True)
class Part:
    """One file of a prelude: its text, its top-level definitions, the names it defines at its
    top level and the names its text uses."""

    name: str
    text: str
    blocks: tuple[Block, ...]
    defines: frozenset[str]
    uses: frozenset[str]

    @classmethod
    def read(cls, path: Path) -> Part:
        text = path.read_text(encoding="utf-8")
        blocks = _blocks(text)
        defines = frozenset().union(*(block.defines for block in blocks))
        return cls(path.name, text, blocks, defines, frozenset(_names_used(text)))


@dataclass(frozen=True)
class Prelude:
    """A file of helpers put in front of scripts; `keys`/`args`: how many of the script's
    last KEYS and ARGV it takes off (0 for helpers only), which its `take` supplies."""

    name: str
    path: Path
    keys: int = 0
    args: int = 0
    take: Take | None = None

    @property
    def text(self) -> str:
        """The file's text; a prelude that is a folder is all its files in name order."""
        return "\n".join(part.text for part in self.parts)

    @property
    def parts(self) -> tuple[Part, ...]:
        """The prelude's files: itself, or a folder's files in name order, one concern each
        (`01_layout.lua`, `02_words.lua`, ...)."""
        paths = sorted(self.path.glob("*.lua")) if self.path.is_dir() else [self.path]
        return tuple(Part.read(path) for path in paths)

    def text_for(self, user: str) -> str:
        """What `user` (a script's text) takes of this prelude: of a folder, the top-level
        definitions that define a name it uses, and those their own text uses, in file and
        name order (one chunk, so their `local`s are the script's; every definition is made
        again at each call, so one a script never calls costs it every time); a top-level
        block that defines nothing but runs code is always taken. A single file whole."""
        parts = self.parts
        if len(parts) == 1:
            return parts[0].text
        blocks = [block for part in parts for block in part.blocks]
        wanted = _names_used(user)
        taken: set[int] = {
            i
            for i, block in enumerate(blocks)
            if not block.defines and any(map(_is_code, block.text.split("\n")))
        }
        for i in taken:
            wanted |= blocks[i].uses
        while more := {
            i for i, block in enumerate(blocks) if i not in taken and block.defines & wanted
        }:
            taken |= more
            for i in more:
                wanted |= blocks[i].uses
        return "\n".join(block.text for i, block in enumerate(blocks) if i in taken)

    @classmethod
    def beside(
        cls, module_file: str, name: str, *, keys: int = 0, args: int = 0, take: Take | None = None
    ) -> Prelude:
        """The prelude `lua/<name>.lua` beside the module that owns it."""
        path = Path(module_file).resolve().parent / "lua" / f"{name}.lua"
        return cls(name, path, keys=keys, args=args, take=take)


# In the order their texts are put in front of a script (the order they are registered). A
# prelude that takes trailing KEYS and ARGV takes them off at load time, so the one put first
# takes the very last ones. Apps add theirs with `register` (directory.confirmed_writes adds
# "version_check", notifications.readmodel "read_model", messaging.store "seen").
PRELUDES: dict[str, Prelude] = {}


def register(prelude: Prelude) -> Prelude:
    if bool(prelude.keys or prelude.args) != (prelude.take is not None):
        raise ValueError(f"Prelude {prelude.name}: what it takes off needs a `take`, and only that")
    PRELUDES.setdefault(prelude.name, prelude)
    return PRELUDES[prelude.name]


def passed_value(script: str, passed: Mapping[str, Any], name: str, what: str) -> Any:
    """What the caller passed as `name` for a prelude's `take`; an error naming `what` the
    script needs when it passed nothing."""
    value = passed.get(name)
    if value is None:
        raise ValueError(f"{script} needs {what}")
    return value


def _take_guard(script: str, passed: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """An Idempotency-Key's binding and record, and its argument: `guard` is a
    config.idempotency.Guard (Guard.none: a request without a key), `answer` what its replay
    answers."""
    guard = passed_value(script, passed, "guard", "a Guard (Guard.none: no key)")
    return list(guard.script_keys()), [guard.arg(passed.get("answer", ""))]


register(Prelude.beside(__file__, "idempotency", keys=2, args=1, take=_take_guard))


class Composed(LuaScript):
    """A script of `lua/<name>.lua` with its preludes, composed once at import."""

    def __init__(
        self, path: Path, *, preludes: Sequence[str] = (), replicated: bool = False
    ) -> None:
        unknown = set(preludes) - set(PRELUDES)
        if unknown:
            raise ValueError(f"Unknown preludes {sorted(unknown)} for {path.name}")
        self.preludes = tuple(name for name in PRELUDES if name in preludes)
        super().__init__(path, replicated=replicated)
        self.own_source = self.source
        # Each prelude gives what the script's own text and the other preludes use of it.
        texts = {name: PRELUDES[name].text for name in self.preludes}
        self.source = "\n".join(
            [
                *(
                    PRELUDES[name].text_for(
                        "\n".join([self.own_source, *(t for n, t in texts.items() if n != name)])
                    )
                    for name in self.preludes
                ),
                self.own_source,
            ]
        )

    @classmethod
    def of(
        cls,
        module_file: str,
        name: str,
        *,
        preludes: Sequence[str] = (),
        replicated: bool = False,
    ) -> Composed:
        """`lua/<name>.lua` beside the module that owns it."""
        folder = Path(module_file).resolve().parent / "lua"
        return cls(folder / f"{name}.lua", preludes=preludes, replicated=replicated)

    def keys_and_args(
        self, keys: Sequence[str], args: Sequence[Any], **passed: Any
    ) -> tuple[list[str], list[Any]]:
        """The full KEYS and ARGV: the script's own, then what its preludes take, in the
        order they take it off (the last registered prelude first), each from what the
        caller passed by name (`guard=`, `answer=`: an Idempotency-Key; `version=`: the
        directory check's (key, held version), directory/confirmed_writes.check)."""
        all_keys, all_args = list(keys), list(args)
        for name in reversed(self.preludes):
            take = PRELUDES[name].take
            if take is not None:
                more_keys, more_args = take(self.path.name, passed)
                all_keys.extend(more_keys)
                all_args.extend(more_args)
        return all_keys, all_args

    def run(
        self, keys: Sequence[str], args: Sequence[Any], *, client: Any = None, **passed: Any
    ) -> Any:
        all_keys, all_args = self.keys_and_args(keys, args, **passed)
        return self(keys=all_keys, args=all_args, client=client)
