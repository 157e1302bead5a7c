"""Functions stay small, and the CLI's entry module stays an entry module (issue 40, item 5).

A function's size is the lines from its `def` to its last line (`end_lineno - lineno + 1`
of its `ast` node): its signature and body, its decorators left out (they are not the
function's length), a nested function counted in its own name and in the function around
it, whose text holds it. A function past `LIMIT` lines fails here unless `ALLOWED` lists it
with its reason; cut it into named helpers instead where the cut is natural.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "conformance"
LIMIT = 120  # lines per function or method
ENTRY = PACKAGE / "cli" / "__init__.py"
ENTRY_LIMIT = 150  # lines of the CLI's entry module: it only wires the commands

# "<path under conformance/>:<qualified name>": why it is one function past LIMIT lines
ALLOWED: dict[str, str] = {}


def function_sizes(root: Path = PACKAGE) -> Iterator[tuple[str, int]]:
    """Every function and method under `root`: `<path>:<qualified name>` and its lines."""
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        yield from _sizes(tree, where, "")


def _sizes(node: ast.AST, where: str, prefix: str) -> Iterator[tuple[str, int]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + child.name
            assert child.end_lineno is not None
            yield f"{where}:{name}", child.end_lineno - child.lineno + 1
            yield from _sizes(child, where, name + ".")
        elif isinstance(child, ast.ClassDef):
            yield from _sizes(child, where, prefix + child.name + ".")
        else:
            yield from _sizes(child, where, prefix)


def test_no_function_is_past_the_limit_unless_allowed_with_its_reason() -> None:
    sizes = dict(function_sizes())
    assert len(sizes) > 1000  # the walk found the package's functions, not nothing
    over = {name: n for name, n in sizes.items() if n > LIMIT and name not in ALLOWED}
    assert not over, (
        f"functions past {LIMIT} lines (cut them into named helpers, or list them in ALLOWED with the reason): "
        + ", ".join(f"{name} ({n} lines)" for name, n in sorted(over.items()))
    )


def test_every_allowed_function_exists_is_past_the_limit_and_says_why() -> None:
    """The allow-list stays short and true: an entry whose function was cut below the limit,
    renamed or removed is taken off it."""
    sizes = dict(function_sizes())
    stale = {name for name in ALLOWED if sizes.get(name, 0) <= LIMIT}
    assert not stale, f"in ALLOWED but not past {LIMIT} lines (or gone): take them off: {sorted(stale)}"
    assert all(len(why.split()) >= 8 for why in ALLOWED.values())  # a reason, not a word


def test_the_cli_entry_module_only_wires_the_commands() -> None:
    lines = len(ENTRY.read_text(encoding="utf-8").splitlines())
    assert lines <= ENTRY_LIMIT, (
        f"{ENTRY.relative_to(ROOT)} is {lines} lines (at most {ENTRY_LIMIT}): a command belongs in cli/commands/, "
        "anything else in a module of its own"
    )
