"""docs/operating/settings.md lists every environment variable the product's code reads, and
reads nothing it does not: the code is scanned (ast) for `env(...)` / `env.<type>(...)` of
django-environ, `os.environ.get(...)`, `os.environ[...]`, `os.getenv(...)` and
`os.environ.setdefault(...)`, with a literal name or a module constant holding one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.conf import settings

BASE_DIR = Path(settings.BASE_DIR)
PAGE = BASE_DIR / "docs" / "operating" / "settings.md"
# What is not the product: its tests, benchmarks and migrations, and installed packages.
SKIPPED = {"tests", "benchmarks", "migrations", ".venv", "var", "staticfiles", "site", "docs"}
NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# django-environ's readers (`env.int("X")`); `env` is also the name of plain dicts elsewhere.
ENV_READERS = {
    "str", "bool", "int", "float", "list", "tuple", "dict", "json", "url", "db", "db_url",
    "cache", "cache_url", "email", "email_url", "search_url", "path", "bytes", "get_value",
}  # fmt: skip


def product_files() -> list[Path]:
    return sorted(
        path
        for path in BASE_DIR.rglob("*.py")
        if not SKIPPED & set(path.relative_to(BASE_DIR).parts)
    )


def _is_os_environ(node: ast.expr) -> bool:
    """`os.environ` (or `environ` imported from os)."""
    if isinstance(node, ast.Attribute) and node.attr == "environ":
        return isinstance(node.value, ast.Name) and node.value.id == "os"
    return False


def _name_of(node: ast.expr, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def variables_read(tree: ast.Module) -> set[str]:
    constants = {
        target.id: statement.value.value
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        argument: ast.expr | None = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Name) and func.id == "env":  # env("X", default=...)
                argument = node.args[0]
            elif isinstance(func, ast.Attribute):
                owner = func.value
                named = owner.id if isinstance(owner, ast.Name) else ""
                if (
                    (named == "env" and func.attr in ENV_READERS)  # env.int("X", ...)
                    or (_is_os_environ(owner) and func.attr in {"get", "setdefault", "pop"})
                    or (named == "os" and func.attr == "getenv")
                ):
                    argument = node.args[0]
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _is_os_environ(node.value)
        ):
            argument = node.slice
        if argument is not None:
            name = _name_of(argument, constants)
            if name is not None and NAME.fullmatch(name):
                found.add(name)
    return found


def read_by_the_code() -> dict[str, list[str]]:
    """Variable -> the files that read it."""
    where: dict[str, list[str]] = {}
    for path in product_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name in variables_read(tree):
            where.setdefault(name, []).append(str(path.relative_to(BASE_DIR)))
    return where


def documented() -> set[str]:
    """The names in the first column of the page's tables."""
    names: set[str] = set()
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", first_cell))
    return names


def test_the_scan_finds_what_it_should():
    """The scanner itself: a few reads of each kind, from files known to make them."""
    found = read_by_the_code()
    assert "config/settings.py" in found["SECRET_KEY"]
    assert "config/settings.py" in found["LOG_LEVEL"]
    assert "demo/environment.py" in found["WMS_DEMO_DIR"]  # through a module constant
    assert "config/health.py" in found["PROMETHEUS_MULTIPROC_DIR"]  # os.environ.get
    assert "devredis/embedded_redis.py" in found["REDIS_SERVER_BIN"]
    assert len(found) > 150


def test_every_variable_the_code_reads_is_documented():
    missing = {
        name: files for name, files in read_by_the_code().items() if name not in documented()
    }
    assert missing == {}, f"add them to {PAGE.relative_to(BASE_DIR)}"


def test_every_documented_variable_is_read_by_the_code():
    assert documented() - set(read_by_the_code()) == set()


def literal_defaults() -> dict[str, object]:
    """Variable -> the literal `default=` of its django-environ read (`env.int("X",
    default=25)`), where the code gives one."""
    found: dict[str, object] = {}
    for path in product_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func = node.func
            is_env = (isinstance(func, ast.Name) and func.id == "env") or (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "env"
                and func.attr in ENV_READERS
            )
            name = _name_of(node.args[0], {}) if is_env else None
            if name is None:
                continue
            for keyword in node.keywords:
                if keyword.arg == "default" and isinstance(keyword.value, ast.Constant):
                    found[name] = keyword.value.value
    return found


def documented_defaults() -> dict[str, str]:
    """Variable -> its default on the page, where a row names as many plain values in its
    second column as variables in its first (`X`, `Y` | `10`, `25`)."""
    found: dict[str, str] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.split("|")
        names = re.findall(r"`([A-Z][A-Z0-9_]*)`", cells[1])
        values = re.findall(r"`([^`]*)`", cells[2])
        if names and len(values) == len(names):
            found.update(zip(names, values, strict=True))
    return found


def _same(code: object, page: str) -> bool:
    if isinstance(code, bool):
        return page.lower() in {str(code).lower(), "1" if code else "0"}
    if isinstance(code, int | float):
        try:
            return float(page.replace(",", "")) == float(code)
        except ValueError:
            return False
    return page == str(code)


def test_the_page_gives_each_numeric_default_the_code_gives():
    """A default changed in the code and not on the page (or the other way round) is found:
    ALERT_REMINDER_BATCH's went from 100 to 25 while the page's row for another setting
    changed instead."""
    code = literal_defaults()
    page = documented_defaults()
    compared = [name for name in page if name in code and isinstance(code[name], int | float)]
    assert len(compared) > 40
    wrong = {
        name: (code[name], page[name]) for name in compared if not _same(code[name], page[name])
    }
    assert wrong == {}, "code default vs the page's"
