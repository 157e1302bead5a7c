"""The edits a scaffolding command makes, planned in memory and written at the end.

A command reads the files it changes, builds every new text first (`Plan.edit`, `Plan.create`)
and writes only when all of them were built: an anchor that is missing or a name already
taken refuses the command (`Refused`, exit 2) before any file changes. Each file is then
written atomically (`core.outputs.write_bytes`: staged beside it, one rename).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core import outputs

LINE = 120  # ruff's line-length (pyproject.toml)


class Refused(Exception):
    """The command cannot run as asked: one line, exit 2, nothing written."""


@dataclass
class Plan:
    """The files a command writes (`created`) and edits, by path relative to `root`."""

    root: Path
    texts: dict[str, str] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)

    def read(self, rel: str) -> str:
        """The text of `rel` as this plan left it (the file's, if the plan has not touched it)."""
        if rel in self.texts:
            return self.texts[rel]
        path = self.root / rel
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise Refused(f"{rel}: cannot read: {exc.strerror}") from None

    def edit(self, rel: str, change: Callable[[str], str]) -> None:
        self.texts[rel] = change(self.read(rel))
        if rel not in self.edited and rel not in self.created:
            self.edited.append(rel)

    def create(self, rel: str, text: str) -> None:
        if (self.root / rel).exists():
            raise Refused(f"{rel} exists already")
        self.texts[rel] = text
        self.created.append(rel)

    def write(self) -> list[str]:
        """Write every file; the lines saying what was written and what was edited."""
        for rel in self.created:
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        for rel, text in self.texts.items():
            outputs.write_bytes(self.root / rel, [text.encode("utf-8")])
        return [f"wrote  {rel}" for rel in self.created] + [f"edited {rel}" for rel in self.edited]


def pystr(text: str) -> str:
    """`text` as a double-quoted Python string literal (the style ruff format keeps)."""
    if "\n" in text or "\r" in text:
        raise Refused(f"{text[:40]!r}...: one line, please")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def call(target: str, func: str, args: list[str]) -> str:
    """`target = func(args)` laid out as ruff format lays it out: on one line when it fits,
    else the arguments on one indented line, else one argument per line."""
    one = f"{target} = {func}({', '.join(args)})"
    if len(one) <= LINE:
        return one + "\n"
    inner = "    " + ", ".join(args)
    if len(inner) <= LINE:
        return f"{target} = {func}(\n{inner}\n)\n"
    return f"{target} = {func}(\n" + "".join(f"    {a},\n" for a in args) + ")\n"


def insert_after_line(text: str, line: int, new: str) -> str:
    """`text` with `new` (whole lines) inserted after its line `line` (1-based)."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[:line]) + new + "".join(lines[line:])


def at_anchor(text: str, anchor: str, new: str, rel: str) -> str:
    """`text` with `new` inserted after the one line holding `anchor`, each of its lines
    indented as that line is."""
    lines = text.splitlines(keepends=True)
    found = [i for i, x in enumerate(lines) if anchor in x]
    if len(found) != 1:
        raise Refused(f"{rel}: expected one line holding {anchor!r}, found {len(found)}")
    indent = re.match(r"\s*", lines[found[0]]).group(0)  # type: ignore[union-attr]
    body = "".join(indent + x if x.strip() else x for x in new.splitlines(keepends=True))
    return "".join(lines[: found[0] + 1]) + body + "".join(lines[found[0] + 1 :])


def _keys(node: ast.Dict) -> list[tuple[str, ast.expr]]:
    return [(str(k.value), v) for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)]


def dict_node(text: str, name: str, rel: str) -> ast.Dict:
    """The dict literal assigned to the module-level `name`."""
    for node in ast.parse(text).body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if isinstance(value, ast.Dict) and any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return value
    raise Refused(f"{rel}: no dict {name} found")


def insert_in_dict(text: str, name: str, key: str, entry: str, rel: str) -> str:
    """`text` with `entry` (whole lines) inserted into the dict `name` after the entry of the
    greatest key below `key` of the same two-letter prefix (before the first entry when none)."""
    node = dict_node(text, name, rel)
    keys = _keys(node)
    if any(k == key for k, _ in keys):
        raise Refused(f"{rel}: {name} has an entry {key} already")
    below = [(k, v) for k, v in keys if k[:2] == key[:2] and k < key]
    if below:
        return insert_after_line(text, max(below, key=lambda kv: kv[0])[1].end_lineno or 0, entry)
    first = node.keys[0] if node.keys and node.keys[0] is not None else None
    if first is None:
        raise Refused(f"{rel}: {name} is empty")
    return insert_after_line(text, first.lineno - 1, entry)


def declarations(text: str, factory: str) -> list[tuple[str, str, ast.Assign]]:
    """(id, constant, node) of every module-level `CONSTANT = factory("ID", ...)`."""
    out = []
    for node in ast.parse(text).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        fn, args = node.value.func, node.value.args
        if isinstance(fn, ast.Name) and fn.id == factory and args and isinstance(args[0], ast.Constant):
            target = node.targets[0]
            if isinstance(target, ast.Name):
                out.append((str(args[0].value), target.id, node))
    return out


def neighbour(decls: list[tuple[str, str, ast.Assign]], rule_id: str) -> tuple[str, str, ast.Assign, bool]:
    """The declaration just below `rule_id` (True: insert after it), else the first above
    it (False: insert before it)."""
    below = [d for d in decls if d[0] < rule_id]
    if below:
        return (*max(below, key=lambda d: d[0]), True)
    return (*min(decls, key=lambda d: d[0]), False)


def declare(text: str, factory: str, rule_id: str, source: str, rel: str) -> tuple[str, str, bool]:
    """`text` with the declaration `source` placed beside its neighbour in id order; the
    neighbour's constant, and whether the new one comes after it."""
    decls = declarations(text, factory)
    if not decls:
        raise Refused(f"{rel}: no {factory}(...) declaration found")
    _, const, node, after = neighbour(decls, rule_id)
    if after:
        return insert_after_line(text, node.end_lineno or 0, source), const, True
    return insert_after_line(text, node.lineno - 1, source + "\n"), const, False


def defined_names(text: str) -> set[str]:
    """The names a module binds at its top level (imports, assignments, functions, classes)."""
    out: set[str] = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    out.add(t.id)
    return out


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's isort order-by-type: CONSTANTS, then Classes, then functions
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def add_imports(text: str, module: str, names: tuple[str, ...], rel: str) -> str:
    """`text` with `names` added to its `from {module} import ...` (laid out as ruff does)."""
    tree = ast.parse(text)
    node = next((n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == module.lstrip(".")
                 and n.level == len(module) - len(module.lstrip("."))), None)  # fmt: skip
    if node is None:
        raise Refused(f"{rel}: no `from {module} import ...` to add {', '.join(names)} to")
    have = [a.name for a in node.names]
    if all(n in have for n in names):
        return text
    every = sorted({*have, *names}, key=_isort_key)
    one = f"from {module} import {', '.join(every)}"
    new = (
        one + "\n" if len(one) <= LINE else f"from {module} import (\n" + "".join(f"    {n},\n" for n in every) + ")\n"
    )
    lines = text.splitlines(keepends=True)
    return "".join(lines[: node.lineno - 1]) + new + "".join(lines[node.end_lineno or 0 :])
