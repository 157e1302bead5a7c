"""`new-rule TSnnn --family F --proof P`: every piece a canonical rule needs, as a stub.

The pieces (CONTRIBUTING.md, "Adding a canonical rule"): its `RuleInfo` in the catalogue and
`CATALOG`; one function registered in its family's module with its fast-path proof (`fast=`,
`engine.FastProof`: what `--proof` names); the fast path's stub for a `local` proof (a
clearing function in `fast/mirror.py` read by `_local`, `_block_ok` or `_priced`) or a
`format` one (`FastPath.__init__`); its fixture (a copy of the valid file), its `CASES` row,
its fix line (`core/rulefixes.py`) and its traceability row (the count tables regenerated).

The function reports nothing, so the guard tests pass at once and the rule's own case
(`tests/test_rules_canonical.py::test_rule_fires_at_the_defect[TSnnn]`) fails until the
defect is planted in the fixture and the function reports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import trace
from .edit import LINE, Plan, Refused, add_imports, at_anchor, call, declare, defined_names, insert_in_dict, pystr

CANONICAL = "conformance/formats/canonical"
RULES = f"{CANONICAL}/rules.py"
MIRROR = f"{CANONICAL}/fast/mirror.py"
FAST = f"{CANONICAL}/fast/__init__.py"
FIXTURES = "tests/rules/canonical"
CASES = "tests/test_rules_canonical.py"
FIXES = "conformance/core/rulefixes.py"
ANCHOR = "# new-rule: scaffolded"
CASE_TEST = "tests/test_rules_canonical.py::test_rule_fires_at_the_defect"


@dataclass(frozen=True)
class Family:
    """An `engine` family: its constant, the parameters of its functions, the names they
    need from `engine` and elsewhere, the proofs that fit it and the record `emit` takes."""

    const: str
    params: str
    engine: tuple[str, ...]
    other: tuple[str, ...]
    proofs: tuple[str, ...]
    record: str


FAMILIES: dict[str, Family] = {
    "message": Family(
        "MESSAGE", "ctx: Context, m: MessageView, emit: Emit", ("Context", "Emit", "MessageView"), (),
        ("local", "format", "decode"), "m.rec",
    ),
    "block": Family(
        "BLOCK", "ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit",
        ("Context", "Emit", "MessageView"), ("Any",), ("local", "decode"), "m.rec",
    ),
    "session": Family(
        "SESSION", "ctx: Context, m: SessionFacts, sess: Session, state: RunState, emit: Emit",
        ("Context", "Emit", "RunState", "Session", "SessionFacts"), (), ("session", "format"), "m.rec",
    ),
    "session-block": Family(
        "SESSION_BLOCK",
        "ctx: Context, m: SessionFacts, i: int, block: dict[str, str], sess: Session, state: RunState, emit: Emit",
        ("Context", "Emit", "RunState", "Session", "SessionFacts"), (), ("session",), "m.rec",
    ),
    "definition": Family(
        "DEFINITION", "rec: Record, tool: dict[str, Any], state: RunState, emit: Emit", ("Emit", "RunState"),
        ("Any", "Record"), ("exact",), "rec",
    ),
    "finish": Family("FINISH", "state: RunState, emit: Emit", ("Emit", "RunState"), ("Record",), ("session",), "Record(...)"),
}  # fmt: skip
"""The families `new-rule` scaffolds (`TOOLS_FILE`, the `--tools` file's, has no fixture of
its own: scaffold such a rule as `definition` and register it in `TOOLS_FILE` too, as TS303)."""

MODULES = {"1": "invariants", "2": "invariants", "3": "tools", "4": "pricing"}
"""The module of a rule, by its id's hundred (`rules.py`: TS1xx one message, TS2xx a session,
TS3xx tools, TS4xx costs; TS0xx are the reader's and the schema's, TS5xx the SQLite store's,
TS9xx conversion's: not scaffolded here)."""

MANUAL = {
    "decode": "the closed Struct in conformance/formats/canonical/fastmodel.py whose strict decode refuses what it reports",
    "session": "its precondition in conformance/formats/canonical/fast/sessions.py (SessionStep.session, _bulk, _pairs_ok)",
}


@dataclass(frozen=True)
class NewRule:
    rule_id: str
    family: str
    proof: str
    name: str
    severity: str
    section: str
    summary: str
    blocks: tuple[str, ...]
    needs: str | None
    strict: bool


def check_args(r: NewRule, known: set[str]) -> Family:
    """The family of a rule that can be scaffolded as asked (else `Refused`)."""
    if not re.fullmatch(r"TS\d{3}", r.rule_id):
        raise Refused(f"{r.rule_id!r} is not a canonical rule id (TS and three digits)")
    if r.rule_id in known:
        raise Refused(f"{r.rule_id} exists already (see `turnspec rule {r.rule_id}`)")
    if r.rule_id[2] not in MODULES:
        raise Refused(
            f"{r.rule_id}: only TS1xx-TS4xx rules are scaffolded (see conformance/formats/canonical/rules.py)"
        )
    family = FAMILIES.get(r.family)
    if family is None:
        raise Refused(f"unknown family {r.family!r} (one of {', '.join(FAMILIES)})")
    if r.proof not in family.proofs:
        raise Refused(f"a {r.family} rule's fast-path proof is one of {', '.join(family.proofs)}, not {r.proof!r}")
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", r.name):
        raise Refused(f"--name {r.name!r} is not an UPPER_CASE constant name")
    if r.blocks and r.family != "block":
        raise Refused("--blocks is for a block rule")
    return family


def _declaration(r: NewRule) -> str:
    args = [pystr(r.rule_id), r.severity, pystr(r.section), pystr(r.summary)] + (["strict=True"] if r.strict else [])
    return call(r.name, "RuleInfo", args)


def _in_catalog(text: str, r: NewRule, neighbour: str, after: bool) -> str:
    """`CATALOG`'s list with the new constant beside its neighbour (the list is `fmt: skip`)."""
    pattern = re.compile(rf"^(\s+.*\b){re.escape(neighbour)},", re.M)
    start = text.find("CATALOG = RuleCatalog(")
    m = pattern.search(text, start)
    if start < 0 or m is None:
        raise Refused(f"{RULES}: {neighbour} is not in CATALOG")
    at = m.end() if after else m.start(0) + len(m.group(1))
    return text[:at] + (f" {r.name}," if after else f"{r.name}, ") + text[at:]


def _rules_py(plan: Plan, r: NewRule) -> None:
    text = plan.read(RULES)
    if r.name in defined_names(text):
        raise Refused(f"{RULES} defines {r.name} already")
    new, neighbour, after = declare(text, "RuleInfo", r.rule_id, _declaration(r), RULES)
    plan.edit(RULES, lambda _: _in_catalog(new, r, neighbour, after))


def _function(r: NewRule, family: Family) -> str:
    names = [pystr(b) for b in r.blocks]
    listed = f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"
    blocks = f", blocks={listed}" if r.family == "block" else ""
    head = f"def {r.name.lower()}({family.params}) -> None:"
    if len(head) > LINE:  # as ruff format wraps it
        head = f"def {r.name.lower()}(\n    {family.params}\n) -> None:"
    return (
        f"\n\n@{family.const}.register(R.{r.name}{blocks}, fast={pystr(r.proof)})\n"
        f"{head}\n"
        f'    """{r.rule_id} ({r.section}): scaffolded by `python -m conformance.dev new-rule`; it reports\n'
        f"    nothing yet, so its case in {CASES} fails until the defect is planted\n"
        f'    in its fixture and reported here: `emit({family.record}, pointer, R.{r.name}, message)`."""\n'
    )


def _module(plan: Plan, r: NewRule, family: Family) -> str:
    rel = f"{CANONICAL}/{MODULES[r.rule_id[2]]}.py"
    text = plan.read(rel)
    if r.name.lower() in defined_names(text):
        raise Refused(f"{rel} defines {r.name.lower()} already")
    text = add_imports(text, ".engine", (family.const, *family.engine), rel)
    missing = [n for n in family.other if n not in defined_names(text)]
    if missing:
        raise Refused(f"{rel} does not import {', '.join(missing)}, which a {r.family} rule's function needs")
    plan.edit(rel, lambda _: text.rstrip("\n") + "\n" + _function(r, family))
    return rel


def _mirror(plan: Plan, r: NewRule) -> str | None:
    """The fast path's stub: a clearing function the mirror's predicate reads (`local`), or
    the batch format's place (`format`); None for a proof whose place is written by hand."""
    clear = f"_{r.rule_id.lower()}_clear"
    if r.proof == "local":
        what, method, fail = (
            ("b", "_block_ok", "False")
            if r.family == "block"
            else ("meta", "_priced", "False")
            if r.rule_id[2] == "4"
            else ("m", "_local", "None")
        )
        seen = {"b": "block", "meta": "message's metadata", "m": "message"}[what]
        helper = (
            f"def {clear}(x: Any) -> bool:\n"
            f'    """{r.rule_id} (scaffolded by `python -m conformance.dev new-rule`): True when the rule cannot\n'
            f"    report on `x` (the {seen} `{method}` sees), the negation of its condition on the Struct; a rule that\n"
            f'    reports nothing yet clears everything. `_columns` sends to `_local` what it may report on."""\n'
            "    return True\n\n\n"
        )
        body = f"if on[R.{r.name}.id] and not {clear}({what}):\n    return {fail}\n"

        def edit(text: str) -> str:
            text = at_anchor(text, f"{ANCHOR} rules' clearing functions", "\n\n" + helper.rstrip("\n") + "\n", MIRROR)
            anchors = [i for i, x in enumerate(text.splitlines()) if x.strip().startswith(f"{ANCHOR} predicates")]
            lines = text.splitlines(keepends=True)
            owner = {
                i: next(x for x in reversed(lines[:i]) if x.lstrip().startswith("def ")).split("(")[0].split()[-1]
                for i in anchors
            }
            at = next((i for i, m in owner.items() if m == method), None)
            if at is None:
                raise Refused(f"{MIRROR}: {method} has no line {ANCHOR} predicates")
            indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
            return (
                "".join(lines[: at + 1])
                + "".join(indent + x for x in body.splitlines(keepends=True))
                + "".join(lines[at + 1 :])
            )

        plan.edit(MIRROR, edit)
        return MIRROR
    if r.proof == "format":
        body = (
            f"if self.on[R.{r.name}.id]:\n"
            f"    self.checks += []  # {r.rule_id} (scaffolded): its (field path, BatchPattern(regex)), checked per batch\n"
        )
        plan.edit(FAST, lambda text: at_anchor(text, f"{ANCHOR} formats", body, FAST))
        return FAST
    return None


def _fixture_and_case(plan: Plan, r: NewRule) -> None:
    suffix, base = (".json", "tools.json") if r.family == "definition" else (".jsonl", "valid.jsonl")
    fixture = f"{r.rule_id}{suffix}"
    plan.create(f"{FIXTURES}/{fixture}", plan.read(f"{FIXTURES}/{base}"))
    needs = pystr(r.needs) if r.needs else "None"
    line = 2 if suffix == ".jsonl" else 1
    entry = (
        f"    # {r.rule_id} (scaffolded): plant the defect in {fixture} (a copy of {base}), then give its line and pointer\n"
        f"    {pystr(r.rule_id)}: ({pystr(fixture)}, {line}, {pystr('/TODO')}, {needs}),\n"
    )
    plan.edit(CASES, lambda text: insert_in_dict(text, "CASES", r.rule_id, entry, CASES))


def _fix(plan: Plan, r: NewRule) -> None:
    text = f"TODO({r.rule_id}): what to change in the data (file, store) when {r.rule_id} fires, in the user's terms."
    entry = f"    {pystr(r.rule_id)}: {pystr(text)},\n"
    plan.edit(FIXES, lambda t: insert_in_dict(t, "FIXES", r.rule_id, entry, FIXES))


def scaffold(plan: Plan, r: NewRule, known: set[str]) -> list[str]:
    """Plan every piece of rule `r`; the steps left to the author."""
    family = check_args(r, known)
    _rules_py(plan, r)
    module = _module(plan, r, family)
    mirror = _mirror(plan, r)
    _fixture_and_case(plan, r)
    _fix(plan, r)
    ref: list[str] = []
    plan.edit(trace.DOC, lambda t: _traced(t, r, ref))
    todo = [
        f"plant the defect in {FIXTURES}/{r.rule_id}.json{'' if r.family == 'definition' else 'l'} and give its line "
        f"and pointer in {CASES}: CASES",
        f"write the rule in {module}: {r.name.lower()} (its case fails until then)",
        f"quote the spec's sentence in {trace.DOC} row {ref[0]}, and the fix in {FIXES}",
    ]
    if mirror == MIRROR:
        todo.append(
            f"write the negation of its condition in {MIRROR}: _{r.rule_id.lower()}_clear (and `_columns` for a "
            "message rule); tests/test_fast_path.py::test_every_rule_fixture_same fails until then"
        )
    elif mirror == FAST:
        todo.append(f"append its BatchPattern in {FAST} (FastPath.__init__, below the `{ANCHOR} formats` line)")
    elif r.proof in MANUAL:
        todo.append(f"make the fast path prove it silent: {MANUAL[r.proof]}")
    return todo


def _traced(text: str, r: NewRule, ref: list[str]) -> str:
    new, got = trace.with_row(text, r.section, r.rule_id, CASE_TEST)
    ref.append(got)
    return new
