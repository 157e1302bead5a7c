"""Issue 29's docs site and issue 25's README check table: the reference pages and the
table are generated from the registries and cover every id; `mkdocs build --strict`
builds offline, fails on a broken internal link, and takes in a guide added later."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import docsgen, every_rule
from conformance.core.findings import Severity
from conformance.suite.rules import CATALOG as CHECKS

ROOT = Path(__file__).resolve().parent.parent


def _table_rows(readme: str) -> dict[str, list[str]]:
    start, end = readme.index(docsgen.BEGIN), readme.index(docsgen.END)
    rows = {}
    for line in readme[start:end].splitlines():
        if re.match(r"^\| TC\d{3} \|", line):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows[cells[0]] = cells
    return rows


def test_readme_check_table_is_the_generated_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert docsgen.readme_with_table(readme) == readme, "run python -m conformance.cli.docsgen --readme"


def test_readme_table_has_every_check_and_marks_the_advisory_ones() -> None:
    rows = _table_rows((ROOT / "README.md").read_text(encoding="utf-8"))
    assert set(rows) == {i.id for i in CHECKS}
    for info in CHECKS:
        advisory = rows[info.id][-1]
        assert advisory.startswith("advisory") == (info.severity == Severity.WARNING), info.id
        assert rows[info.id][2] == info.section.replace("|", "\\|")
    assert rows["TC306"][-1].startswith("advisory")
    # the sentence column cites a traceability row by its ref (A44b quotes TC306's reading)
    assert rows["TC306"][3].startswith("[A44b](docs/traceability.md) ")


def test_reference_pages_have_a_page_for_every_rule_and_check() -> None:
    """Issue 39: one page per rule and check (284 entries on one page were too many), each
    linked from its index, which lists them without their help."""
    pages = docsgen.pages()
    ids = [i.id for i in every_rule()]
    assert len(ids) > 200
    for rid in ids:
        index = pages["reference/checks.md" if rid in CHECKS else "reference/rules.md"]
        folder = "checks" if rid in CHECKS else "rules"
        assert f"]({folder}/{rid.lower()}.md)" in index, rid
        assert pages[f"reference/{folder}/{rid.lower()}.md"].startswith(f"# {rid}: "), rid
    assert "How to fix" not in pages["reference/rules.md"] and "How to fix" not in pages["reference/checks.md"]


def test_a_stale_readme_table_is_reported(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stale = tmp_path / "README.md"
    stale.write_text(readme.replace("| TC306 |", "| TC306x |"), encoding="utf-8")
    assert docsgen.main(["--check", str(stale)]) == 1
    assert docsgen.main(["--readme", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == readme


needs_mkdocs = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs-material is not installed (the [docs] extra, in [dev])",
)


def _build(site: Path) -> subprocess.CompletedProcess[str]:
    # offline: any request goes to a closed local port
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(site / "mkdocs.yml"), "-d", str(site / "site")],
        capture_output=True, text=True, env=env, check=False, cwd=site,
    )  # fmt: skip


@pytest.fixture
def site(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path


@needs_mkdocs
def test_site_builds_strict_offline_with_generated_references_and_a_later_guide(site: Path) -> None:
    (site / "docs" / "new-wire-api.md").write_text("# A new wire API\n\nSee [checks](reference/checks.md#tc104).\n")
    done = _build(site)
    assert done.returncode == 0, done.stderr
    rules = (site / "site" / "reference" / "rules" / "index.html").read_text(encoding="utf-8")
    assert 'href="ts202/"' in rules and 'href="ts001/"' in rules  # the index links each rule's page
    assert (site / "site" / "reference" / "rules" / "ts202" / "index.html").is_file()
    checks = (site / "site" / "reference" / "checks" / "index.html").read_text(encoding="utf-8")
    assert 'href="tc405/"' in checks
    page = (site / "site" / "reference" / "checks" / "tc405" / "index.html").read_text(encoding="utf-8")
    assert "How to fix" in page
    index = (site / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="new-wire-api/"' in index  # in the nav


@needs_mkdocs
def test_site_build_fails_on_a_broken_internal_link(site: Path) -> None:
    page = site / "docs" / "formats.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [the missing page](nowhere.md).\n", encoding="utf-8")
    done = _build(site)
    assert done.returncode != 0
    assert "nowhere.md" in done.stderr


@needs_mkdocs
def test_wide_tables_wrap_instead_of_being_clipped(site: Path) -> None:
    """Issue 39: the site's stylesheet lets a wide table (the check table) take the page's
    width and wrap its cells, instead of a box clipped at the text's width."""
    done = _build(site)
    assert done.returncode == 0, done.stderr
    checks = (site / "site" / "reference" / "checks" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../stylesheets/extra.css"' in checks
    css = (site / "site" / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r"table:not\(\[class\]\)\s*\{[^}]*display:\s*table", css)
    assert re.search(r"td,[^{]*th\s*\{[^}]*overflow-wrap:\s*anywhere", css)
