"""`turnspec rules` and `turnspec rule ID`: the rule catalogue (`conformance.catalogue`), listed
and explained."""

from __future__ import annotations

import enum
import json
import sys
from typing import Annotated, Any

import typer

from ...catalogue import each_rule_part, every_rule
from ...core import escaping, ruledocs
from ...core.errors import InputError
from ...core.findings import RuleInfo
from ..options import check_prefixes, split


class OutputFormat(enum.StrEnum):
    text = "text"
    json = "json"


def register(app: typer.Typer) -> None:
    app.command()(rules)
    app.command()(rule)


def _rule_row(r: RuleInfo) -> dict[str, Any]:
    return {"id": r.id, "severity": str(r.severity), "section": r.section, "summary": r.summary, "strict": r.strict}


def rules(
    ids: Annotated[
        list[str] | None,
        typer.Argument(help="Only these rule ids or prefixes (as --select)", show_default=False),
    ] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Report format")] = OutputFormat.text,
    select: Annotated[list[str] | None, typer.Option(help="Only ids with these prefixes")] = None,
) -> None:
    """List every rule: id, severity, spec section, summary."""
    every = list(every_rule())
    given = tuple(i.upper() for i in split(ids))
    prefixes = (*given, *split(select))
    check_prefixes("rules", given, [r.id for r in every])
    check_prefixes("--select", split(select), [r.id for r in every])
    infos = [r for r in every if not prefixes or r.id.startswith(prefixes)]
    if output == OutputFormat.json:
        json.dump([_rule_row(r) for r in infos], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    for r in infos:
        sev = f"{r.severity}{'*' if r.strict else ''}"
        sys.stdout.write(f"{r.id}  {sev:8}  {r.section:22}  {r.summary}\n")
    sys.stdout.write("(* a warning that --strict makes an error)\n")


def _first_paragraph(doc: str | None) -> str | None:
    """A docstring's first paragraph on one line (None when there is no docstring)."""
    if not doc:
        return None
    return " ".join(doc.strip().split("\n\n", 1)[0].split()) or None


def _rule_details(rule_id: str, kind: str) -> dict[str, Any]:
    """What else is known of a rule: the docstring of the function that checks it, and for
    a suite check the capability it needs and its standard test."""
    out: dict[str, Any] = {"kind": kind}
    docs: list[str | None] = []
    if kind.startswith("format"):
        # function-level import: the rule functions are loaded only for `turnspec rule`
        from ...formats.canonical.engine import FAMILIES

        docs += [fn.__doc__ for fam in FAMILIES for info, _, fn in fam.rules if info.id == rule_id]
    if kind.startswith("conformance suite"):
        # function-level imports: the checks (adapters, wire records) are loaded only for a suite check
        from ...suite.checks import CHECKS
        from ...suite.rules import NEEDS, TEST_SLUGS

        docs += [c.fn.__doc__ for c in CHECKS if rule_id in c.rules]
    checks = [d for d in map(_first_paragraph, docs) if d]
    if checks:
        out["checks"] = checks[0]
    if kind.startswith("conformance suite"):
        if rule_id in NEEDS:
            out["needs"] = NEEDS[rule_id]
        slug = TEST_SLUGS.get(rule_id)
        if slug is not None:
            out["test"] = f"test_{rule_id.lower()}_{slug}"
    return out


def rule(
    rule_id: Annotated[str, typer.Argument(metavar="ID", help="A rule id, e.g. TS202 or TC405", show_default=False)],
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Report format")] = OutputFormat.text,
) -> None:
    """Explain one rule: id, severity, spec section, summary, what reports it."""
    wanted = rule_id.strip().upper()
    found = next(((kind, part[wanted]) for kind, part in each_rule_part() if wanted in part), None)
    if found is None:
        raise InputError(f"unknown rule {rule_id!r} (see `turnspec rules`)")
    kind, info = found
    doc = {**_rule_row(info), **_rule_details(info.id, kind), **_rule_help(info)}
    if output == OutputFormat.json:
        body = json.dumps(escaping.json_safe(doc), indent=2, ensure_ascii=False)
        sys.stdout.write(escaping.json_text(body) + "\n")
        return
    sys.stdout.writelines(escaping.text_line(line) + "\n" for line in _rule_lines(info, kind, doc))


def _rule_lines(info: RuleInfo, kind: str, doc: dict[str, Any]) -> list[str]:
    """`turnspec rule ID`'s text: one `name: value` line per part of `doc`, examples indented."""
    strict = " (an error with --strict)" if info.strict else ""
    lines = [
        f"{info.id}: {info.summary}",
        f"  severity: {info.severity}{strict}",
        f"  section:  {info.section}",
        f"  kind:     {kind}",
    ]
    if "checks" in doc:
        lines.append(f"  checks:   {doc['checks']}")
    if "needs" in doc:
        lines.append(f"  needs:    the adapter capability {doc['needs']} (skipped when declared false)")
    if "test" in doc:
        lines.append(f"  test:     {doc['test']} (suite.testing.AdapterConformanceTests)")
    if kind.startswith(("format", "migration")):
        lines.append(f"  select:   validate --select {info.id}, or --ignore {info.id} to leave it out")
    elif kind.startswith("conformance suite"):
        lines.append(f"  select:   conform --select {info.id}, or --ignore {info.id} to leave it out")
    for s in doc["requires"]:
        lines.append(f"  requires: {s['text']} ({s['spec']} {s['section']}, traceability row {s['ref']})")
    for x in doc.get("examples", []):
        where = f", at {x['pointer']}" if x["pointer"] else ""
        lines.append(f"  failing:  {x['fixture']} line {x['line']}{where}:")
        lines += [f"              {row}" for row in x["failing"].splitlines()]
        if x["passing"] is not None:
            lines.append(f"  passing:  {x['base']} line {x['line']}{where}:")
            lines += [f"              {row}" for row in x["passing"].splitlines()]
    for m in doc.get("catches", []):
        lines.append(f"  catches:  {m['bug']} ({m['mutant']})")
    lines.append(f"  fix:      {doc['fix']}")
    lines.append(f"  docs:     {doc['help_uri']}")
    return lines


def _rule_help(info: RuleInfo) -> dict[str, Any]:
    """The statements a rule enforces, its fixture's examples, the bugs it catches, how to
    fix it and its docs page (`ruledocs`: the same text as SARIF `help` and the docs site)."""
    out: dict[str, Any] = {
        "requires": [
            {"ref": s.ref, "spec": s.spec, "section": s.section, "text": s.text} for s in ruledocs.statements(info.id)
        ]
    }
    ex = ruledocs.example(info.id)
    if ex is not None:
        out["examples"] = [
            {"fixture": ex.fixture, "base": ex.base, "line": x.line, "pointer": x.pointer,
             "failing": x.failing_fragment, "passing": x.passing_fragment}
            for x in ex.lines
        ]  # fmt: skip
    caught = ruledocs.mutants(info.id)
    if caught:
        out["catches"] = [{"mutant": m.name, "base": m.base, "bug": m.bug} for m in caught]
    out["fix"] = ruledocs.fix_text(info)
    out["help_uri"] = ruledocs.help_uri(info.id)
    return out
