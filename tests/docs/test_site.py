"""The docs site builds with `mkdocs build --strict` (mkdocs.yml): a broken link, a link to a
missing anchor or a page left out of the nav fails, as it does in CI."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

BASE_DIR = Path(settings.BASE_DIR)


def test_the_site_builds_strictly(tmp_path: Path):
    pytest.importorskip("mkdocs", reason="mkdocs comes with the dev extras")
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    built = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "architecture" / "directory" / "index.html").exists()


def slug(heading: str) -> str:
    """A heading's anchor, as MkDocs and GitHub make it for the headings used here."""
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def anchors(page: Path) -> set[str]:
    return {
        slug(line.lstrip("#"))
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }


def test_readme_and_contributing_links_lead_somewhere():
    """README and CONTRIBUTING are not part of the site: their relative links, and the anchors
    of those links, are checked here."""
    for name in ("README.md", "CONTRIBUTING.md"):
        text = (BASE_DIR / name).read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if "://" in target:
                continue
            page = BASE_DIR / (target or name)
            assert page.exists(), f"{name} links to {target}"
            if anchor:
                assert anchor in anchors(page), f"{name} links to {target}#{anchor}"


def test_the_docs_name_no_contract_outside_the_repository():
    """For the product's users, the docs and the OpenAPI schema are the contract: no page
    points to a specification's sections that the repository does not hold."""
    pages = [
        BASE_DIR / "README.md",
        BASE_DIR / "CONTRIBUTING.md",
        *(BASE_DIR / "docs").rglob("*.md"),
    ]
    cited = [
        f"{page.relative_to(BASE_DIR)}:{number}"
        for page in pages
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bSPEC\b", line)
    ]
    assert cited == []


def test_the_site_is_served_beside_the_demo():
    """`mkdocs serve` (README) must not want the demo's port: it died on 8000 (issue 39)."""
    from demo.management.commands.demo import Command

    parser = Command().create_parser("manage.py", "demo")
    demo_port = parser.parse_args([]).port
    served = re.search(
        r"^dev_addr:\s*([\d.]+):(\d+)\s*$", (BASE_DIR / "mkdocs.yml").read_text(), re.M
    )
    assert served is not None, "mkdocs.yml sets no dev_addr: mkdocs serve takes 8000"
    assert int(served.group(2)) != demo_port
    assert f"127.0.0.1:{served.group(2)}" in (BASE_DIR / "docs" / "tasks" / "index.md").read_text()
