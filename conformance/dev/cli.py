"""The commands of `python -m conformance.dev` (argparse, as `conformance.cli.docsgen`).

Every command plans its edits in memory (`edit.Plan`), refuses what it cannot do with one
line on stderr and exit 2 before writing anything, then writes each file atomically and
prints one line per file written or edited, then the steps left to the author.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

from ..core.errors import InputError
from . import check, rule, wire
from .catalog import known_ids
from .edit import Plan, Refused

PROG = "python -m conformance.dev"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """A usage error is one line (exit 2), as every refusal of these commands."""
        sys.stderr.write(f"{PROG}: {message}\n")
        raise SystemExit(2)


def checkout() -> Path:
    """The checkout this package lives in (the commands edit it, never another tree)."""
    root = Path(__file__).resolve().parents[2]
    if not all((root / p).exists() for p in ("pyproject.toml", "tests", "docs/traceability.md")):
        raise Refused(f"{root} is not a turnspec checkout (the commands write its tests and docs)")
    return root


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=(__doc__ or "").split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    r = sub.add_parser("new-rule", help="scaffold a canonical rule (TSnnn)")
    r.add_argument("rule_id", metavar="TSnnn")
    r.add_argument("--family", required=True, help=f"its engine family: {', '.join(rule.FAMILIES)}")
    r.add_argument("--proof", required=True, help="how the fast path proves it silent (engine.FastProof)")
    r.add_argument("--name", help="its constant in rules.py (default RULE_TSnnn); its function is the same, lower case")
    r.add_argument("--severity", choices=("E", "W"), default="E")
    r.add_argument("--strict", action="store_true", help="a warning --strict makes an error")
    r.add_argument("--section", default="§TODO", help="the section it enforces (`contract §4.2`, `streaming §6`)")
    r.add_argument("--summary", help="its one-line summary")
    r.add_argument("--blocks", default="", help="a block rule's block types, comma-separated (default text)")
    r.add_argument("--needs", choices=("tools", "pricing"), help="the side file its case runs with (TS4xx: pricing)")
    c = sub.add_parser("new-check", help="scaffold a suite check (TCnnn)")
    c.add_argument("rule_id", metavar="TCnnn")
    c.add_argument("--family", required=True, help="its module under conformance/suite/checks/")
    c.add_argument("--name", help="its constant in suite/rules.py (default CHECK_TCnnn)")
    c.add_argument("--severity", choices=("E", "W"), default="E")
    c.add_argument("--section", default="contract §TODO", help="the section it enforces")
    c.add_argument("--summary", help="its one-line summary")
    c.add_argument("--slug", help="its standard test's name, test_<id>_<slug> (default: the name, lower case)")
    c.add_argument("--needs", help="the capability it needs (declared false: skipped)")
    c.add_argument("--mutant", help="its mutant's class in tests/mutants.py (default BreaksTCnnn)")
    c.add_argument("--mutant-of", default="OpenAIChatAdapter", help="the reference adapter the mutant subclasses")
    w = sub.add_parser("new-wire-api", help="scaffold a wire API's record, schemas and registry line")
    w.add_argument("name", help="its record's name (`acme-chat`)")
    w.add_argument("--docs", action="append", default=[], help="a documentation URL it is written from (repeat)")
    w.add_argument("--base-url", required=True, help="the provider's base URL (its docs' authentication section)")
    w.add_argument("--path", required=True, help="its request path (`/v1/chat`)")
    w.add_argument("--framing", default="sse", help="its streams' framing: sse, ndjson, json-array")
    w.add_argument("--key-env", help="the environment variable holding the key (default: <FIRST WORD>_API_KEY)")
    w.add_argument("--title", help="the API's name as its docs give it")
    return p


def _new_rule(a: argparse.Namespace, plan: Plan) -> list[str]:
    blocks = tuple(a.blocks.split(",")) if a.blocks else ("text",) if a.family == "block" else ()
    needs = a.needs or ("pricing" if a.rule_id[2:3] == "4" else None)
    new = rule.NewRule(
        a.rule_id, a.family, a.proof, a.name or f"RULE_{a.rule_id}", a.severity, a.section,
        a.summary or f"TODO({a.rule_id}): what the rule reports, in one line", blocks, needs, a.strict,
    )  # fmt: skip
    return rule.scaffold(plan, new, known_ids())


def _new_check(a: argparse.Namespace, plan: Plan) -> list[str]:
    name = a.name or f"CHECK_{a.rule_id}"
    new = check.NewCheck(
        a.rule_id, a.family, name, a.severity, a.section,
        a.summary or f"TODO({a.rule_id}): what the check requires, in one line", a.slug or name.lower(),
        a.needs, a.mutant or f"Breaks{a.rule_id}", a.mutant_of,
    )  # fmt: skip
    return check.scaffold(plan, new, known_ids())


def _readme(root: Path) -> str | None:
    """README's check table regenerated in a child that imports the files just written
    (this process holds the catalogue as it was); the child's error, if any."""
    path = os.pathsep.join(x for x in (str(root), str(root / "generated"), os.environ.get("PYTHONPATH", "")) if x)
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli.docsgen", "--readme", "README.md"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return None if proc.returncode == 0 else (lines[-1] if lines else f"exit {proc.returncode}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        plan = Plan(checkout())
        commands = {"new-rule": _new_rule, "new-check": _new_check, "new-wire-api": wire.scaffold_args}
        todo = commands[args.command](args, plan)
        done = plan.write()
    except (Refused, InputError, OSError) as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 2
    if args.command == "new-check":
        problem = _readme(plan.root)
        if problem is not None:
            sys.stdout.write("".join(f"{line}\n" for line in done))
            sys.stderr.write(f"{PROG}: README.md: the check table was not regenerated ({problem}); "
                             "run python -m conformance.cli.docsgen --readme\n")  # fmt: skip
            return 1
        done.append("edited README.md")
    sys.stdout.write("".join(f"{line}\n" for line in done))
    sys.stdout.write("".join(f"next:  {step}\n" for step in todo))
    return 0
