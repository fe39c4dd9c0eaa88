"""The import contracts of pyproject.toml ([tool.importlinter]; docs/architecture/layers.md):
no package imports from a layer above it, and the development Redis stays out of the product.
A broken contract fails here, with import-linter's report of the offending imports."""

from pathlib import Path

from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_no_import_runs_from_a_lower_layer_up(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # the root packages are found from the project's folder
    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    assert status == EXIT_STATUS_SUCCESS, capsys.readouterr().out


def import_cycles(graph) -> list[list[str]]:
    """The groups of modules that import each other round in a circle (strongly connected
    components of more than one module), each sorted. Imports inside functions and under
    TYPE_CHECKING count, as in the contracts."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return sorted(cycles)


def test_no_module_imports_itself_round_a_circle(monkeypatch):
    """No import cycle between the product's modules (two files that import each other, or a
    longer ring): one of them must come first."""
    import tomllib

    import grimp

    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    graph = grimp.build_graph(*config["tool"]["importlinter"]["root_packages"], cache_dir=None)
    assert import_cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    import grimp

    graph = grimp.ImportGraph()
    for module in ("app.services", "app.tasks", "app.models"):
        graph.add_module(module)
    graph.add_import(importer="app.services", imported="app.tasks")
    graph.add_import(importer="app.tasks", imported="app.services")
    graph.add_import(importer="app.tasks", imported="app.models")
    assert import_cycles(graph) == [["app.services", "app.tasks"]]
