"""What `turnspec rule ID`, SARIF `help`/`helpUri`, the HTML report and the docs site say
about a rule or check, read at run time from data this package ships (never written twice):

- the spec statements it enforces: the rows of `docs/traceability.md` that name its id
  (the statement as the table words it, its spec file and section);
- for a canonical rule, a failing and a passing example: the line of its test fixture
  (`tests/rules/canonical/<ID>.jsonl`, "`valid.jsonl` with one deliberate defect") that
  differs from `valid.jsonl`, beside the `valid.jsonl` line it replaces, and the JSON
  pointers that differ (what to change to fix it);
- for a suite check, the planted bugs its test fixtures kill (`tests/mutants.py`: one
  mutant adapter per bug, the check that must fail, the bug in the class docstring), read
  as text with `ast`, never imported.

In a checkout the files are read where they live; a wheel carries them under
`conformance/_ruledocs/` (pyproject's force-include).
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import pointers
from .findings import RuleInfo, Severity

DOCS_URL = "https://turnspec.dev/docs/"
"""The docs site (`mkdocs.yml`'s `site_url`); the rule and check reference pages live under it."""

_ID = re.compile(r"^[A-Z]{2}\d{3}$")

TROUBLESHOOTING: dict[str, str] = {}
"""Rule id -> what to check when it fails, as langchain-tests words each standard test's
troubleshooting: filled by the catalogue that declares the rule (`suite.rules` for the
checks), read by `fix_text`."""


def _root() -> Path:
    here = Path(__file__).resolve().parents[1]  # the package: conformance/core/ruledocs.py
    shipped = here / "_ruledocs"
    return shipped if shipped.is_dir() else here.parent


def _paths() -> tuple[Path, Path, Path]:
    """(traceability table, canonical rule fixtures folder, mutants module)."""
    root = _root()
    if root.name == "_ruledocs":
        return root / "traceability.md", root / "rules" / "canonical", root / "mutants.py.txt"
    return root / "docs" / "traceability.md", root / "tests" / "rules" / "canonical", root / "tests" / "mutants.py"


def page_of(rule_id: str) -> str:
    """The reference page of an id: suite checks (TC) on `checks`, every other id on `rules`."""
    return "checks" if rule_id.startswith("TC") else "rules"


def help_uri(rule_id: str) -> str:
    """The rule's entry on the docs site (its heading's anchor is the lower-case id)."""
    return f"{DOCS_URL}reference/{page_of(rule_id)}/#{rule_id.lower()}"


@dataclass(frozen=True)
class Statement:
    """One row of the traceability table: `ref` (C01, A17, ...), the spec file, its section and the statement."""

    ref: str
    spec: str
    section: str
    text: str
    status: str


@dataclass(frozen=True)
class ExampleLine:
    """One line of a rule's fixture that the defect touches: `failing` is line `line` of the
    fixture, `passing` the valid line it replaces (None when the fixture adds the line or
    removes the lines after it), `changes` the JSON pointers whose values differ."""

    line: int
    failing: str
    passing: str | None
    changes: tuple[str, ...]


@dataclass(frozen=True)
class Example:
    """A canonical rule's fixture (a valid file with one deliberate defect) and the lines
    the defect touches (two when it swaps ids or renames a call and its result)."""

    fixture: str
    lines: tuple[ExampleLine, ...]


@dataclass(frozen=True)
class Mutant:
    """A planted bug a suite check must catch: the mutant adapter's class, the reference
    adapter it changes and what it does wrong (its docstring's first sentence)."""

    name: str
    base: str
    bug: str


@functools.cache
def _statements() -> dict[str, tuple[Statement, ...]]:
    path = _paths()[0]
    out: dict[str, list[Statement]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    spec = ""
    for line in text.splitlines():
        if line.startswith("## "):
            spec = line[3:].strip()
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) < 5 or cells[0] in ("ref", "spec") or set(cells[0]) <= set("-"):
            continue
        ids = [i.strip() for i in cells[4].split(",")]
        for rid in ids:
            if _ID.match(rid):
                out.setdefault(rid, []).append(Statement(cells[0], spec, cells[1], cells[2], cells[3]))
    return {k: tuple(v) for k, v in out.items()}


def statements(rule_id: str) -> tuple[Statement, ...]:
    """The traceability rows that name `rule_id` (empty for an id no row names)."""
    return _statements().get(rule_id, ())


def _diff_pointers(a: Any, b: Any, at: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            token = pointers.token(k)
            if k not in a or k not in b:
                out.append(f"{at}/{token}")
            else:
                out += _diff_pointers(a[k], b[k], f"{at}/{token}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b, strict=True)) for p in _diff_pointers(x, y, f"{at}/{i}")]
    return [] if a == b and type(a) is type(b) else [at or "/"]


def _changes(failing: str, passing: str | None) -> tuple[str, ...]:
    if passing is None:
        return ()
    try:
        return tuple(_diff_pointers(json.loads(failing), json.loads(passing)))
    except ValueError:
        return ()


@functools.cache
def example(rule_id: str) -> Example | None:
    """The failing and passing example of a canonical rule, from its fixture (None without one).
    The fixture is a valid file with one deliberate defect; the example is the line the defect
    is on and, when the fixture changes that line in place, the valid line it replaces."""
    folder = _paths()[1]
    for suffix, base in ((".jsonl", "valid.jsonl"), (".json", "tools.json")):
        fixture = folder / f"{rule_id}{suffix}"
        if not fixture.is_file():
            continue
        try:
            bad = fixture.read_text(encoding="utf-8").splitlines()
            good = (folder / base).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        lines: list[ExampleLine] = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, good, bad, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            if j2 == j1:  # lines removed: the defect is on the line they followed
                if j1 > 0:
                    lines.append(ExampleLine(j1, bad[j1 - 1], None, ()))
                continue
            same = tag == "replace" and i2 - i1 == j2 - j1
            for k in range(j1, j2):
                passing = good[i1 + k - j1] if same else None
                lines.append(ExampleLine(k + 1, bad[k], passing, _changes(bad[k], passing)))
        return Example(fixture.name, tuple(lines[:3])) if lines else None
    return None


@functools.cache
def _mutants() -> dict[str, tuple[Mutant, ...]]:
    try:
        tree = ast.parse(_paths()[2].read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    classes: dict[str, Mutant] = {}
    table: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            doc = " ".join((ast.get_docstring(node) or "").split())
            base = ast.unparse(node.bases[0]) if node.bases else ""
            classes[node.name] = Mutant(node.name, base, doc)
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "MUTANTS"
            and isinstance(node.value, ast.Dict)
        ):
            for k, v in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(k, ast.Name) and isinstance(v, ast.Constant) and isinstance(v.value, str):
                    table.setdefault(v.value, []).append(k.id)
    return {rid: tuple(classes[n] for n in names if n in classes) for rid, names in table.items()}


def mutants(rule_id: str) -> tuple[Mutant, ...]:
    """The planted bugs the suite's tests require `rule_id` to catch (empty when none)."""
    return _mutants().get(rule_id, ())


def _fix_text(info: RuleInfo, ex: Example | None) -> str:
    if ex is not None:
        changed = [f"line {x.line}: {', '.join(x.changes[:4])}" for x in ex.lines if x.changes]
        if changed and all(x.passing is not None for x in ex.lines):
            return f"make the values at {'; '.join(changed)} what the passing example has (the fixture's only defect)."
        if all(x.passing is not None for x in ex.lines):
            return f"make line(s) {', '.join(str(x.line) for x in ex.lines)} what the passing example has."
        return (
            f"the fixture is valid.jsonl with lines added, moved or removed at line(s) "
            f"{', '.join(str(x.line) for x in ex.lines)}; the rule reads a line against the rest of its session."
        )
    if info.id.startswith("TC"):
        caught = "; the bugs listed are ones it is known to catch" if mutants(info.id) else ""
        hint = TROUBLESHOOTING.get(info.id)
        first = f"If this check fails, {hint} " if hint else ""
        return (
            f"{first}`turnspec conform ADAPTER --select {info.id} -v` shows each failing case with its cassette and "
            f"reason, and the adapter's traceback when it raised{caught}."
        )
    return "each finding names the file, line and JSON pointer; the statements it enforces say what the value must be."


def fix_text(info: RuleInfo) -> str:
    """How to fix a finding of `info` (from its fixture where it has one)."""
    return _fix_text(info, example(info.id))


def help_text(info: RuleInfo) -> str:
    """Plain text: the summary, severity, each statement with its section, the examples and the fix."""
    lines = [
        f"{info.id}: {info.summary}",
        f"Severity: {info.severity}{' (an error with --strict)' if info.strict else ''}.",
    ]
    lines.append(f"Spec section: {info.section}.")
    for s in statements(info.id):
        lines.append(f"Requires ({s.spec} {s.section}, {s.ref}): {s.text}")
    ex = example(info.id)
    fixture = ex.fixture if ex is not None else ""
    for x in ex.lines if ex is not None else ():
        lines.append(f"Failing example ({fixture} line {x.line}): {x.failing}")
        if x.passing is not None:
            lines.append(f"Passing example (valid line {x.line}): {x.passing}")
    for m in mutants(info.id):
        lines.append(f"Caught bug ({m.name}, from {m.base}): {m.bug}")
    lines.append(f"How to fix: {_fix_text(info, ex)}")
    lines.append(f"More: {help_uri(info.id)}")
    return "\n".join(lines)


def _md(text: str) -> str:
    """Markdown-safe inline text (no link, emphasis or HTML from data)."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|])", r"\\\1", text)


def _fence(text: str) -> str:
    ticks = "`" * max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks}json\n{text}\n{ticks}"


def help_markdown(info: RuleInfo, *, heading: str = "") -> str:
    """The same as `help_text`, as Markdown (SARIF `help.markdown`, the docs site's entry)."""
    sev = f"{info.severity}{' (an error with `--strict`)' if info.strict else ''}"
    out = [
        f"{heading}{info.id}: {_md(info.summary)}".strip(),
        "",
        f"**Severity:** {sev} · **Spec section:** {_md(info.section)}",
        "",
    ]
    rows = statements(info.id)
    if rows:
        out += ["**What it requires:**", ""]
        out += [f"- {_md(s.text)} ({_md(s.spec)} {_md(s.section)}, row {_md(s.ref)})" for s in rows]
        out.append("")
    ex = example(info.id)
    fixture = ex.fixture if ex is not None else ""
    for x in ex.lines if ex is not None else ():
        out += [f"**Failing example** (`{fixture}` line {x.line}):", "", _fence(x.failing), ""]
        if x.passing is not None:
            out += ["**Passing example** (the line it replaces in `valid.jsonl`):", "", _fence(x.passing), ""]
    ms = mutants(info.id)
    if ms:
        out += ["**Bugs it catches** (the suite's mutant adapters):", ""]
        out += [f"- `{m.name}` ({_md(m.base)}): {_md(m.bug)}" for m in ms]
        out.append("")
    out += [f"**How to fix:** {_md(_fix_text(info, ex))}", ""]
    return "\n".join(out)


def is_advisory(info: RuleInfo) -> bool:
    """A warning: reported, never failing a run unless `--strict` makes it an error."""
    return info.severity == Severity.WARNING
