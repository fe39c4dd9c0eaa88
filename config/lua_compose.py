"""Lua scripts composed with their preludes by name, built once.

A prelude is a file of helpers a script takes in front of its own text (one chunk, so the
prelude's `local function`s are the script's). Some preludes also take the script's last KEYS
and ARGV (an Idempotency-Key's binding and record, the directory's version): those are taken in
one fixed order, whatever order a script names them in, and the call below appends what each
takes in that same order. So no caller mirrors a nesting order by hand: it names what it
passes (`guard=`, `version=`), and the composed script puts it where its preludes look.

Each prelude's header says what it takes with lines starting `-- Takes:`; a script names its
preludes in its header (`-- Preludes: read_model, idempotency`).
tests/test_lua_scripts.py checks that a script's header names exactly the preludes it is
composed with and that its own KEYS/ARGV lines leave room for what they take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.redis import LuaScript

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Prelude:
    """A file of helpers put in front of scripts; `keys`/`args`: how many of the script's
    last KEYS and ARGV it takes off (0 for helpers only)."""

    name: str
    path: Path
    keys: int = 0
    args: int = 0

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


# In the order their texts are put in front of a script (the order they are registered). A
# prelude that takes trailing KEYS and ARGV takes them off at load time, so the one put first
# takes the very last ones. The two that take KEYS and ARGV are registered here; an app adds
# helper-only preludes with `register` (notifications.readmodel adds "read_model").
PRELUDES: dict[str, Prelude] = {}


def register(prelude: Prelude) -> Prelude:
    PRELUDES.setdefault(prelude.name, prelude)
    return PRELUDES[prelude.name]


register(Prelude("idempotency", ROOT / "config" / "lua" / "idempotency.lua", keys=2, args=1))
register(Prelude("version_check", ROOT / "directory" / "lua" / "version_check.lua", keys=1, args=1))


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
        self.source = "\n".join([*(PRELUDES[name].text for name in self.preludes), self.own_source])

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
        self,
        keys: Sequence[str],
        args: Sequence[Any],
        *,
        guard: Any = None,
        answer: str = "",
        version: tuple[str, str] | None = None,
    ) -> tuple[list[str], list[Any]]:
        """The full KEYS and ARGV: the script's own, then what its preludes take, in the
        order they take it off (the last registered prelude first). `guard` is a
        config.idempotency.Guard (Guard.none: a request without a key) and `answer` what its
        replay answers; `version` the directory check's (key, held version)
        (directory/confirmed_writes.check)."""
        all_keys, all_args = list(keys), list(args)
        for name in reversed(self.preludes):
            if name == "version_check":
                if version is None:
                    raise ValueError(f"{self.path.name} needs the directory's version")
                all_keys.append(version[0])
                all_args.append(version[1])
            elif name == "idempotency":
                if guard is None:
                    raise ValueError(f"{self.path.name} needs a Guard (Guard.none: no key)")
                all_keys.extend(guard.script_keys())
                all_args.append(guard.arg(answer))
        return all_keys, all_args

    def run(
        self,
        keys: Sequence[str],
        args: Sequence[Any],
        *,
        guard: Any = None,
        answer: str = "",
        version: tuple[str, str] | None = None,
        client: Any = None,
    ) -> Any:
        all_keys, all_args = self.keys_and_args(
            keys, args, guard=guard, answer=answer, version=version
        )
        return self(keys=all_keys, args=all_args, client=client)
