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
