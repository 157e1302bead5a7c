"""The import-linter contracts (.importlinter) hold, and they catch an upward import.

The layering is a property of the whole package, so the check runs `lint-imports` on the
checkout; the second test plants an upward import in a copy and proves the contract fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")

pytestmark = pytest.mark.skipif(LINT is None, reason="import-linter is not installed (pip install -e '.[test]')")


def _lint(pkg_parent: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{pkg_parent}{os.pathsep}{ROOT / 'generated'}"}
    assert LINT is not None
    return subprocess.run(
        [LINT, "--config", str(ROOT / ".importlinter"), "--no-cache"],
        cwd=pkg_parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_layers_hold_on_the_checkout() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("core/findings.py", "from .. import cli"),  # core importing the CLI
        ("formats/chibi/__init__.py", "from .. import geppetto"),  # one format importing a peer
        ("adapters/__init__.py", "from .. import suite"),  # adapters importing the suite above
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path: Path, module: str, upward: str) -> None:
    shutil.copytree(ROOT / "conformance", tmp_path / "conformance", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "conformance" / module
    target.write_text(target.read_text() + f"\n{upward}  # planted\n")
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "BROKEN" in done.stdout or "broken" in done.stdout.lower()


def test_no_import_cycle_counting_function_level_and_type_checking_imports() -> None:
    """import-linter sees module-level imports; a cycle can hide in a function body or under
    `if TYPE_CHECKING:` (issue 24). Every import statement anywhere in a module counts here."""
    import ast  # function-level: only this test parses the package

    root = Path(__file__).resolve().parents[1] / "conformance"
    mods: dict[str, Path] = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p

    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        here = m.split(".") if p.name == "__init__.py" else m.split(".")[:-1]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = ".".join(here[: len(here) - node.level + 1]) if node.level else ""
                module = ".".join(x for x in (base, node.module or "") if x)
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                dep = owner(t) if t.startswith("conformance") else None
                if dep is not None and dep != m:
                    graph[m].add(dep)

    # strongly connected components (Tarjan, iterative)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))
    assert len(mods) > 100 and sum(map(len, graph.values())) > 300  # the graph was really built
    assert cycles == []


def test_ulids_and_the_time_format_are_declared_once() -> None:
    """ULIDs are minted and read (Crockford base32) in `conformance/core/ids.py` alone, and the
    canonical time format string is written there alone (issue 24: one concept, one place)."""
    root = Path(__file__).resolve().parents[1] / "conformance"
    offenders = []
    for p in sorted(root.rglob("*.py")):
        if p.name == "ids.py" and p.parent == root / "core":
            continue
        text = p.read_text(encoding="utf-8")
        for needle in ("0123456789ABCDEFGHJKMNPQRSTVWXYZ", "%Y-%m-%dT%H:%M:%S", "ULID.from_bytes", "str(ULID())"):
            if needle in text:
                offenders.append(f"{p.relative_to(root.parent)}: {needle}")
    assert offenders == []
