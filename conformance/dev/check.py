"""`new-check TCnnn --family F`: every piece a suite check needs, as a stub.

The pieces (CONTRIBUTING.md, "Adding a conformance check"): its `CheckInfo` (troubleshooting
`fix`, standard test `slug`) in `suite/rules.py` and `CATALOG`; one function decorated with
`@check` in the family's module `suite/checks/<family>.py` and its line in
`suite/checks/__init__.py: CHECKS`; a planted-defect mutant in `tests/mutants.py` and its
`MUTANTS` entry; its traceability row (the count tables regenerated); README's check table
(`python -m conformance.cli.docsgen --readme`, run once the rest is written, in a child
that reads the new declaration).

The function yields no case and the mutant plants no bug, so the guard tests pass at once
and `tests/test_mutants.py::test_mutant_is_killed_by_expected_rule[<mutant>]` fails ("survived
TCnnn") until the check's cases and the mutant's bug are written.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from . import trace
from .edit import Plan, Refused, declare, defined_names, pystr

SUITE = "conformance/suite"
RULES = f"{SUITE}/rules.py"
CHECKS = f"{SUITE}/checks"
MUTANTS = "tests/mutants.py"
MUTANT_TEST = "tests/test_mutants.py::test_mutant_is_killed_by_expected_rule"
NEEDED = ("Env", "Iterator", "Outcome", "R", "check")  # what the stub function's module must bind


@dataclass(frozen=True)
class NewCheck:
    rule_id: str
    family: str
    name: str
    severity: str
    section: str
    summary: str
    slug: str
    needs: str | None
    mutant: str
    mutant_of: str


def families(root: Path) -> list[str]:
    """The modules of `suite/checks/` that hold checks (`@check` functions)."""
    return sorted(p.stem for p in (root / CHECKS).glob("*.py") if "\n@check(" in p.read_text(encoding="utf-8"))


def check_args(c: NewCheck, known: set[str], root: Path) -> None:
    if not re.fullmatch(r"TC\d{3}", c.rule_id):
        raise Refused(f"{c.rule_id!r} is not a suite check id (TC and three digits)")
    if c.rule_id in known:
        raise Refused(f"{c.rule_id} exists already (see `turnspec rule {c.rule_id}`)")
    have = families(root)
    if c.family not in have:
        raise Refused(f"unknown family {c.family!r} (a module of {CHECKS}/: {', '.join(have)})")
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", c.name):
        raise Refused(f"--name {c.name!r} is not an UPPER_CASE constant name")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", c.slug):
        raise Refused(f"--slug {c.slug!r} is not a snake_case name")
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", c.mutant):
        raise Refused(f"--mutant {c.mutant!r} is not a CamelCase class name")


def _declaration(c: NewCheck) -> str:
    fix = f"TODO({c.rule_id}): what to look at in the adapter when this check fails (its troubleshooting line)."
    args = [pystr(c.rule_id), c.severity, pystr(c.section), pystr(c.summary), f"slug={pystr(c.slug)}"]
    args += [f"needs={pystr(c.needs)}"] if c.needs else []
    args.append(f"fix={pystr(fix)}")
    return f"{c.name} = CheckInfo(\n" + "".join(f"    {a},\n" for a in args) + ")\n"


def _rules_py(plan: Plan, c: NewCheck) -> None:
    text = plan.read(RULES)
    if c.name in defined_names(text):
        raise Refused(f"{RULES} defines {c.name} already")
    if f"slug={pystr(c.slug)}" in text:
        raise Refused(f"{RULES}: another check has the slug {c.slug!r}")
    new, neighbour, after = declare(text, "CheckInfo", c.rule_id, _declaration(c), RULES)
    line = re.search(rf"^        {re.escape(neighbour)},\n", new[new.find("CATALOG = RuleCatalog(") :], re.M)
    if line is None:
        raise Refused(f"{RULES}: {neighbour} is not on a line of its own in CATALOG")
    at = new.find("CATALOG = RuleCatalog(") + (line.end() if after else line.start())
    plan.edit(RULES, lambda _: new[:at] + f"        {c.name},\n" + new[at:])


def _function(c: NewCheck) -> str:
    return (
        f"\n\n@check(R.{c.name})\n"
        f"def {c.name.lower()}(env: Env) -> Iterator[Outcome]:\n"
        f'    """{c.rule_id} ({c.section}): scaffolded by `python -m conformance.dev new-check`; it yields no\n'
        f"    case yet, so its mutant ({MUTANTS}: {c.mutant}) survives and tests/test_mutants.py fails\n"
        f"    until each case is written: one `outcome(R.{c.name}, subject, status, case, why)` per case\n"
        '    (`status` "pass", "fail" or "skip"; a fail or skip says why in one line)."""\n'
        "    yield from ()\n"
    )


def _check_module(plan: Plan, c: NewCheck) -> None:
    rel = f"{CHECKS}/{c.family}.py"
    text = plan.read(rel)
    names = defined_names(text)
    if c.name.lower() in names:
        raise Refused(f"{rel} defines {c.name.lower()} already")
    missing = [n for n in NEEDED if n not in names]
    if missing:
        raise Refused(f"{rel} does not import {', '.join(missing)}, which a check function needs")
    plan.edit(rel, lambda t: t.rstrip("\n") + "\n" + _function(c))
    init = f"{CHECKS}/__init__.py"

    def in_checks(t: str) -> str:
        node = next(
            (n for n in ast.parse(t).body if isinstance(n, ast.AnnAssign) and ast.unparse(n.target) == "CHECKS"),
            None,
        )
        if node is None or not isinstance(node.value, ast.Tuple) or node.end_lineno is None:
            raise Refused(f"{init}: no CHECKS tuple")
        if c.family not in defined_names(t):
            raise Refused(f"{init} does not import the module {c.family}")
        lines = t.splitlines(keepends=True)
        return (
            "".join(lines[: node.end_lineno - 1])
            + f"    {c.family}.{c.name.lower()},\n"
            + "".join(lines[node.end_lineno - 1 :])
        )

    plan.edit(init, in_checks)


def _mutant(plan: Plan, c: NewCheck) -> None:
    text = plan.read(MUTANTS)
    names = defined_names(text)
    if c.mutant in names:
        raise Refused(f"{MUTANTS} defines {c.mutant} already")
    if c.mutant_of not in names:
        raise Refused(f"--mutant-of {c.mutant_of!r}: {MUTANTS} imports no such adapter class")
    cls = (
        f"class {c.mutant}({c.mutant_of}):\n"
        f'    """TODO({c.rule_id}): the bug this mutant plants in {c.mutant_of}, in one sentence (scaffolded by\n'
        f'    `python -m conformance.dev new-check`: it changes nothing yet, so {c.rule_id} cannot kill it)."""\n\n\n'
    )
    anchor = "\nMUTANTS: dict[type, str] = {\n"
    at = text.find(anchor)
    if at < 0:
        raise Refused(f"{MUTANTS}: no `MUTANTS: dict[type, str] = {{`")
    text = text[: at + 1] + cls + text[at + 1 :]
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.AnnAssign) and ast.unparse(n.target) == "MUTANTS")
    lines = text.splitlines(keepends=True)
    end = node.end_lineno or 0
    plan.edit(
        MUTANTS,
        lambda _: "".join(lines[: end - 1]) + f"    {c.mutant}: {pystr(c.rule_id)},\n" + "".join(lines[end - 1 :]),
    )


def scaffold(plan: Plan, c: NewCheck, known: set[str]) -> list[str]:
    """Plan every piece of check `c` (README's table is regenerated once they are written);
    the steps left to the author."""
    check_args(c, known, plan.root)
    _rules_py(plan, c)
    _check_module(plan, c)
    _mutant(plan, c)
    ref: list[str] = []

    def traced(t: str) -> str:
        new, got = trace.with_row(t, c.section, c.rule_id, MUTANT_TEST)
        ref.append(got)
        return new

    plan.edit(trace.DOC, traced)
    return [
        f"write the check's cases in {CHECKS}/{c.family}.py: {c.name.lower()} "
        f"({MUTANT_TEST}[{c.mutant}] fails until then)",
        f"plant the bug it catches in {MUTANTS}: {c.mutant}",
        f"write its troubleshooting line (`fix=`) and summary in {RULES}: {c.name}",
        f"quote the spec's sentence in {trace.DOC} row {ref[0]}, then `python -m conformance.cli.docsgen --readme`",
    ]
