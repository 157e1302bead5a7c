"""What `turnspec rule ID`, SARIF `help`/`helpUri`, the HTML report and the docs site say
about a rule or check, read at run time from data this package ships (never written twice):

- the spec statements it enforces: the rows of `docs/traceability.md` that name its id
  (the statement as the table words it, its spec file and section);
- for a canonical rule, the smallest failing and passing fragments: of the line of its test
  fixture (`tests/rules/canonical/<ID>.jsonl`, "`valid.jsonl` with one deliberate defect")
  that differs from `valid.jsonl` and of the `valid.jsonl` line it replaces, the value at the
  deepest JSON pointer holding every difference, pretty-printed, with what is the same on
  both sides left out (a line the fixture adds shows the value at the place its finding
  names, from the hand-written table of `tests/test_rules_canonical.py`, read with `ast`);
- how to fix a finding, in the user's terms: one line per rule (`rulefixes.FIXES`; a suite
  check's is its `CheckInfo.fix`, read from the value given, `RuleInfo.troubleshooting`);
- for a suite check, the planted bugs its test fixtures kill (`tests/mutants.py`: one
  mutant adapter per bug, the check that must fail, the bug in the class docstring), read
  as text with `ast`, never imported.

In a checkout the files are read where they live; a wheel carries them under
`conformance/_ruledocs/` (pyproject's force-include).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import pointers
from .findings import RuleInfo, Severity
from .rulefixes import FIXES

DOCS_URL = "https://turnspec.dev/docs/"
"""The docs site (`mkdocs.yml`'s `site_url`); the rule and check reference pages live under it."""

_ID = re.compile(r"^[A-Z]{2}\d{3}$")


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


def _cases_path() -> Path:
    """The canonical rules' table of defect locations (`tests/test_rules_canonical.py: CASES`)."""
    root = _root()
    return root / "rule_cases.py.txt" if root.name == "_ruledocs" else root / "tests" / "test_rules_canonical.py"


def page_of(rule_id: str) -> str:
    """The reference page of an id: suite checks (TC) on `checks`, every other id on `rules`."""
    return "checks" if rule_id.startswith("TC") else "rules"


def page_path(rule_id: str) -> str:
    """The rule's own page under the docs folder (`reference/rules/ts104.md`): one page per
    rule or check, as ruff's rules have, so no page holds all of them."""
    return f"reference/{page_of(rule_id)}/{rule_id.lower()}.md"


def help_uri(rule_id: str) -> str:
    """The rule's page on the docs site (`page_path` as mkdocs serves it)."""
    return f"{DOCS_URL}{page_path(rule_id).removesuffix('.md')}/"


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
    removes the lines after it), `changes` the JSON pointers whose values differ. The
    fragments are what to show: the value at `pointer` on each side, pretty-printed, with
    what both sides share left out (`fragment`); a line that is no JSON document (a line of
    a pretty-printed `.json` fixture) is its own fragment."""

    line: int
    failing: str
    passing: str | None
    changes: tuple[str, ...]
    pointer: str = ""
    failing_fragment: str = ""
    passing_fragment: str | None = None
    fixture: str = ""  # the fixture's file name, and the valid file it is a copy of
    base: str = "valid.jsonl"


@dataclass(frozen=True)
class Example:
    """A canonical rule's fixture (a valid file with one deliberate defect) and the lines
    the defect touches (two when it swaps ids or renames a call and its result)."""

    fixture: str
    lines: tuple[ExampleLine, ...]
    base: str = "valid.jsonl"  # the valid file the fixture is a copy of


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
def _case_pointers() -> dict[str, tuple[int, str]]:
    """Rule id -> (line, pointer) of its finding in its fixture, from the hand-written table
    `CASES` of tests/test_rules_canonical.py (read with `ast`, never imported)."""
    try:
        tree = ast.parse(_cases_path().read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    out: dict[str, tuple[int, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Dict):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if not any(isinstance(t, ast.Name) and t.id == "CASES" for t in targets):
                continue
            for k, v in zip(node.value.keys, node.value.values, strict=True):
                try:
                    rid, row = ast.literal_eval(k) if k is not None else None, ast.literal_eval(v)
                except ValueError:
                    continue
                if isinstance(rid, str) and isinstance(row, tuple) and len(row) >= 3:
                    out[rid] = (int(row[1]), str(row[2]))
    return out


def _split(pointer: str) -> list[str]:
    return [pointers.unescape(t) for t in pointer.split("/")[1:]] if pointer else []


def _at(doc: Any, pointer: str) -> Any:
    """The value at `pointer` in `doc`, or `_NOWHERE` when the path does not exist."""
    node = doc
    for key in _split(pointer):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return _NOWHERE
    return node


_NOWHERE = object()
_LONG = 60  # a string longer than this is shortened in a fragment (an image's base64, a long text)


def _shared(changes: list[str]) -> str:
    """The deepest pointer every change is at or under."""
    if not changes:
        return ""
    parts = [c.split("/")[1:] for c in changes]
    common: list[str] = []
    for tokens in zip(*parts, strict=False):
        if len(set(tokens)) != 1:
            break
        common.append(tokens[0])
    return "/" + "/".join(common) if common else ""


def _parent(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0] if pointer else ""


def _place(docs: list[Any], changes: list[str], hint: str = "") -> str:
    """Where the fragments are taken: the deepest pointer holding every change (or `hint`,
    the finding's place, for a line with no counterpart) that is an object or an array on
    every side, so a member that one side lacks, or a changed value, shows with its key."""
    at = _shared(changes) if changes else hint
    while at and not all(isinstance(_at(d, at), dict | list) for d in docs):
        at = _parent(at)
    return at


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _LONG:
        return value[: _LONG - 10] + "…"
    return value


def fragment(value: Any, at: str, changes: tuple[str, ...] | list[str], keep: str = "") -> Any:
    """`value` (found at pointer `at`) cut to what explains a difference: a member or item on
    the path to a change (or to `keep`, the finding's place) kept and cut the same way, a
    changed value whole, other scalar members kept as context, other objects and arrays left
    out; long strings shortened."""
    marks = [*changes, *([keep] if keep else [])]
    whole = list(changes) or marks  # the finding's place shown whole only when nothing changed in place

    def on_path(p: str) -> bool:
        return any(c == p or c.startswith(p + "/") for c in marks)

    def exact(p: str) -> bool:
        return any(c == p for c in whole)

    def cut(v: Any, p: str) -> Any:
        if exact(p):
            return _whole(v)
        if isinstance(v, dict):
            out: dict[str, Any] = {}
            for k, item in v.items():
                q = f"{p}/{pointers.token(k)}"
                if on_path(q):
                    out[k] = cut(item, q)
                elif not isinstance(item, dict | list):
                    out[k] = _short(item)
            return out
        if isinstance(v, list):
            return [cut(item, f"{p}/{i}") if on_path(f"{p}/{i}") else _summary(item) for i, item in enumerate(v)]
        return _short(v)

    return cut(value, at)


def _whole(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _whole(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_whole(x) for x in v]
    return _short(v)


def _summary(item: Any) -> Any:
    """An item beside the difference: its scalar members (a block's `type`, `text`, ...)."""
    if isinstance(item, dict):
        return {k: _short(v) for k, v in item.items() if not isinstance(v, dict | list)}
    return _short(item) if not isinstance(item, list) else []


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _example_line(line: int, failing: str, passing: str | None, finding: str | None) -> ExampleLine:
    """The line's fragments (see `ExampleLine`); `finding` is the finding's pointer when the
    rule's table places it on this line."""
    changes = _changes(failing, passing)
    try:
        bad = json.loads(failing)
        good = json.loads(passing) if passing is not None else None
    except ValueError:
        return ExampleLine(line, failing, passing, changes, "", failing, passing)
    docs = [bad] if good is None else [bad, good]
    keep = finding or ""  # the place the finding names is shown too (TS111 compares two values)
    at = _place(docs, [*changes, *([keep] if keep and changes else [])], keep)
    shown = fragment(_at(bad, at), at, changes, keep)
    other = None if good is None else _pretty(fragment(_at(good, at), at, changes, keep))
    return ExampleLine(line, failing, passing, changes, at, _pretty(shown), other)


def _add(lines: list[ExampleLine], x: ExampleLine, finding: str | None) -> None:
    """`x` among `lines`, unless an earlier line shows the same fragments (the same defect on
    two lines, TS104, is shown once, on the line of the finding when that is one of them)."""
    shown = (x.pointer, x.failing_fragment, x.passing_fragment)
    same = [i for i, y in enumerate(lines) if (y.pointer, y.failing_fragment, y.passing_fragment) == shown]
    if not same:
        lines.append(x)
    elif finding is not None:
        lines[same[0]] = x


def _example_lines(bad: list[str], good: list[str], pretty: bool, case: tuple[int, str] | None) -> list[ExampleLine]:
    """The lines of a fixture (`bad`) that differ from the valid file (`good`), as examples;
    `pretty`: a pretty-printed `.json` document, whose changed blocks of lines are shown as
    they read."""
    lines: list[ExampleLine] = []

    def add(n: int, failing: str, passing: str | None) -> None:
        finding = case[1] if case is not None and case[0] == n else None
        _add(lines, _example_line(n, failing, passing, finding), finding)

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, good, bad, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if pretty and j2 > j1:
            failing = textwrap.dedent("\n".join(bad[j1:j2]))
            passing = textwrap.dedent("\n".join(good[i1:i2])) if i2 > i1 else None
            lines.append(ExampleLine(j1 + 1, failing, passing, (), "", failing, passing))
            continue
        if j2 == j1:  # lines removed: the defect is on the line they followed
            if j1 > 0:
                add(j1, bad[j1 - 1], None)
            continue
        same = tag == "replace" and i2 - i1 == j2 - j1
        for k in range(j1, j2):
            add(k + 1, bad[k], good[i1 + k - j1] if same else None)
    return lines


@functools.cache
def example(rule_id: str) -> Example | None:
    """The failing and passing example of a canonical rule, from its fixture (None without one).
    The fixture is a valid file with one deliberate defect; the example is the line the defect
    is on and, when the fixture changes that line in place, the valid line it replaces, each
    cut to its fragment (`ExampleLine`)."""
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
        lines = _example_lines(bad, good, suffix == ".json", _case_pointers().get(rule_id))
        shown = tuple(dataclasses.replace(x, fixture=fixture.name, base=base) for x in lines[:3])
        return Example(fixture.name, shown, base) if shown else None
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


def _fix_text(info: RuleInfo) -> str:
    # a suite check's troubleshooting (as langchain-tests words each standard test's) is
    # its declaration's (`CheckInfo.fix`); every other rule's fix is its line of FIXES
    hint = info.troubleshooting or FIXES.get(info.id)
    if info.id.startswith("TC"):
        caught = "; the bugs listed are ones it is known to catch" if mutants(info.id) else ""
        first = f"If this check fails, {hint} " if hint else ""
        return (
            f"{first}`turnspec conform ADAPTER --select {info.id} -v` shows each failing case with its cassette and "
            f"reason, and the adapter's traceback when it raised{caught}."
        )
    if hint:
        return hint
    return f"see what the statements above require of the value the finding points at ({info.summary.lower()})."


def fix_text(info: RuleInfo) -> str:
    """How to fix a finding of `info`: its line of `rulefixes.FIXES` (a suite check's: its
    troubleshooting line and how to see its failing cases)."""
    return _fix_text(info)


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
    for x in ex.lines if ex is not None else ():
        where = f" at {x.pointer}" if x.pointer else ""
        lines.append(f"Failing example ({x.fixture} line {x.line}{where}):")
        lines += [f"  {row}" for row in x.failing_fragment.splitlines()]
        if x.passing_fragment is not None:
            lines.append(f"Passing example ({x.base} line {x.line}{where}):")
            lines += [f"  {row}" for row in x.passing_fragment.splitlines()]
    for m in mutants(info.id):
        lines.append(f"Caught bug ({m.name}, from {m.base}): {m.bug}")
    lines.append(f"How to fix: {_fix_text(info)}")
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
    for x in ex.lines if ex is not None else ():
        where = f" at `{x.pointer}`" if x.pointer else ""
        out += [f"**Failing example** (`{x.fixture}` line {x.line}{where}):", "", _fence(x.failing_fragment), ""]
        if x.passing_fragment is not None:
            out += [f"**Passing example** (the same place in `{x.base}`):", "", _fence(x.passing_fragment), ""]
    ms = mutants(info.id)
    if ms:
        out += ["**Bugs it catches** (the suite's mutant adapters):", ""]
        out += [f"- `{m.name}` ({_md(m.base)}): {_md(m.bug)}" for m in ms]
        out.append("")
    out += [f"**How to fix:** {_md(_fix_text(info))}", ""]
    return "\n".join(out)


def is_advisory(info: RuleInfo) -> bool:
    """A warning: reported, never failing a run unless `--strict` makes it an error."""
    return info.severity == Severity.WARNING
