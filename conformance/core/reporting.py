"""Findings for CI systems: SARIF 2.1.0, GitHub workflow annotations, JUnit XML.

Every checking command (`validate`, `conform`, `schema diff`, `replay-check`) reports
`Finding`s with rule ids from a `RuleCatalog`, so one renderer per CI format serves them
all. Locations carry the file, the line and the JSON pointer; the rule metadata carries
the one-line summary and the spec section the rule enforces.

- SARIF: OASIS SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/), the format
  GitHub code scanning uploads. The JSON pointer is the result's logical location and a
  `jsonPointer` property, since SARIF regions are text positions.
- GitHub: workflow commands (`::error file=...,line=...,title=...::message`), escaped as
  the runner's toolkit escapes them, capped at GitHub's 10 error and 10 warning
  annotations per step (the rest are counted in a final notice), plus a step-summary
  markdown table for `$GITHUB_STEP_SUMMARY`.
- JUnit: one test case per input file, one failure per error finding, for CI systems
  that read JUnit XML (GitLab, Jenkins, Azure).

Data in findings (paths, pointers, messages quoting the input) goes through
`conformance.core.escaping`, one function per sink: `json_safe` for SARIF, the toolkit's own
escapes (plus `unsurrogate`) for workflow commands, `md` for the step summary, `text_line`
and `xml` for JUnit.
"""

from __future__ import annotations

import enum
import functools
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO
from urllib.parse import quote

from . import escaping, ruledocs
from .findings import Finding, RuleCatalog, RuleInfo, Severity, location_key, path_key
from .outputs import append_text

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://turnspec.dev/"


@functools.cache
def tool_version() -> str:
    """The installed turnspec's version (SARIF's `tool.driver.version`)."""
    from importlib.metadata import PackageNotFoundError, version  # loaded only when a SARIF report is written

    try:
        return version("turnspec")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


GITHUB_CAP_PER_LEVEL = 10  # GitHub shows at most 10 error and 10 warning annotations per step


def _artifact(path: str) -> tuple[str, str | None]:
    """A finding path as a relative URI; `store.db#messages` keeps the table as a fragment."""
    base, sep, fragment = path.partition("#")
    base = base.replace("\\", "/")
    try:  # a non-UTF-8 name: its own bytes, percent-encoded (`%FF`), as a URI carries them
        raw: str | bytes = base.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name decodes to: shown, then quoted
        raw = escaping.unsurrogate(base)
    return quote(raw, safe="/.-_~"), (fragment if sep else None)


def _rule_entry(info: RuleInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "name": info.id,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": f"{info.summary} (spec {info.section})"},
        "help": {"text": ruledocs.help_text(info), "markdown": ruledocs.help_markdown(info)},
        "helpUri": ruledocs.help_uri(info.id),
        "defaultConfiguration": {"level": "error" if info.severity == Severity.ERROR else "warning"},
        "properties": {"section": info.section, "strict": info.strict},
    }


SKIPPED = RuleInfo("TS013", Severity.WARNING, "§9", "File skipped: in no known format, so not validated")
"""A file the walk skipped (no format's detection took it): a note in SARIF (code scanning
lists it with the alerts, where a tool notification would only reach its status page), a
warning annotation on GitHub, a skipped test case in JUnit."""
SKIPPED_MESSAGE = "skipped: no known format"

UNREADABLE = RuleInfo(
    "TS000", Severity.ERROR, "§9", "Input cannot be read (missing, not a regular file, or unreadable)"
)
"""An input that could not be read at all (missing, not a regular file, unreadable): exit 2.
`validate` reports each as one line on standard error, and as a finding of this rule in a
findings output (SARIF, GitHub, JUnit, ...)."""


def to_sarif(
    findings: Iterable[Finding],
    catalog: RuleCatalog,
    *,
    tool: str = "turnspec",
    skipped: Sequence[str] = (),
    notes: Sequence[Finding] = (),
) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; rules listed are those the results use, sorted by id.
    Each of the `skipped` files is a note-level result of rule `SKIPPED`; each of the `notes`
    (what a check did not judge, with why: a suite case skipped) a note-level result of its
    own rule, after the findings."""
    listed = list(findings)
    noted = list(notes)
    used = sorted({f.rule for f in [*listed, *noted]} | ({SKIPPED.id} if skipped else set()))
    rules: list[dict[str, Any]] = [
        _rule_entry(catalog[r]) if r in catalog else _rule_entry(SKIPPED) if r == SKIPPED.id else {"id": r, "name": r}
        for r in used
    ]
    if skipped:
        rules[used.index(SKIPPED.id)]["defaultConfiguration"] = {"level": "note"}
    index = {r: i for i, r in enumerate(used)}
    results: list[dict[str, Any]] = []
    for f, note in [*((f, False) for f in listed), *((f, True) for f in noted)]:
        uri, fragment = _artifact(f.path)
        physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
        if f.line is not None and f.line >= 1:
            physical["region"] = {"startLine": f.line, **({"startColumn": f.column} if f.column else {})}
        # a finding of no file (path ""): a logical location only (SARIF §3.28.1)
        location: dict[str, Any] = {"physicalLocation": physical} if f.path else {}
        logical = [{"fullyQualifiedName": f"{fragment}{f.pointer}" if fragment else f.pointer or "/"}]
        location["logicalLocations"] = logical
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": "note" if note else "error" if f.severity == Severity.ERROR else "warning",
                "message": {"text": f.message},
                "locations": [location],
                "properties": {"jsonPointer": f.pointer, **({"table": fragment} if fragment else {})},
            }
        )
    for path in skipped:
        uri, _ = _artifact(path)
        results.append(
            {
                "ruleId": SKIPPED.id,
                "ruleIndex": index[SKIPPED.id],
                "level": "note",
                "message": {"text": SKIPPED_MESSAGE},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
            }
        )
    return escaping.json_safe(
        {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": tool,
                            "version": tool_version(),
                            "informationUri": INFORMATION_URI,
                            "rules": rules,
                        }
                    },
                    "columnKind": "unicodeCodePoints",
                    "results": results,
                }
            ],
        }
    )


def _escape_data(s: str) -> str:
    # actions/toolkit's escapeData; `unsurrogate` so a non-UTF-8 name cannot fail the write
    return escaping.unsurrogate(s).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def to_github(findings: Iterable[Finding], *, skipped: Sequence[str] = ()) -> str:
    """Workflow-command annotations, at most 10 per level; the rest are counted in a notice.
    Each of the `skipped` files is a warning (`skipped: no known format`), before the findings."""
    lines: list[str] = []
    shown: Counter[str] = Counter()
    hidden: Counter[str] = Counter()
    for path in skipped:
        if shown["warning"] >= GITHUB_CAP_PER_LEVEL:
            hidden["warning"] += 1
            continue
        shown["warning"] += 1
        title = _escape_property(SKIPPED.id)
        lines.append(f"::warning file={_escape_property(path)},title={title}::{SKIPPED_MESSAGE}")
    for f in findings:
        level = "error" if f.severity == Severity.ERROR else "warning"
        if shown[level] >= GITHUB_CAP_PER_LEVEL:
            hidden[level] += 1
            continue
        shown[level] += 1
        props = [f"file={_escape_property(f.path.partition('#')[0])}"] if f.path else []
        if f.path and f.line is not None and f.line >= 1:
            props.append(f"line={f.line}")
            if f.column is not None and f.column >= 1:
                props.append(f"col={f.column}")
        props.append(f"title={_escape_property(f'{f.rule} {f.pointer}'.strip())}")
        lines.append(f"::{level} {','.join(props)}::{_escape_data(f.message)}")
    if hidden:
        more = ", ".join(f"{n} more {lvl}(s)" for lvl, n in sorted(hidden.items()))
        lines.append(f"::notice title=turnspec::{more} not annotated (GitHub shows 10 per level); see the job log")
    return "".join(line + "\n" for line in lines)


def step_summary(
    findings: Sequence[Finding], catalog: RuleCatalog, *, title: str = "turnspec", skipped: Sequence[str] = ()
) -> str:
    """Markdown for `$GITHUB_STEP_SUMMARY`: counts per rule, then the first findings (and
    how many files were skipped, with the first of them)."""
    counts = Counter((f.rule, str(f.severity)) for f in findings)
    out = [f"## {title}", ""]
    if skipped:
        more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
        out += [f"{len(skipped)} file(s) skipped (no known format): {escaping.md(skipped[0])}{more}", ""]
    if not findings:
        return "\n".join([*out, "No findings.", ""])
    out += ["| rule | severity | count | summary |", "|---|---|---:|---|"]
    for (rule, sev), n in sorted(counts.items()):
        summary = catalog[rule].summary if rule in catalog else ""
        out.append(f"| {escaping.md(rule)} | {sev} | {n} | {escaping.md(summary)} |")
    out += ["", "| location | rule | message |", "|---|---|---|"]
    md = escaping.md
    for f in findings[:50]:
        loc = f.location
        # plain escaped text, not code spans: a backtick in the data would close one
        where = f"{md(loc)} {md(f.pointer)}".rstrip()
        out.append(f"| {where} | {md(f.rule)} | {md(f.message)} |")
    if len(findings) > 50:
        out.append(f"\n{len(findings) - 50} more finding(s) in the job log.")
    return "\n".join([*out, ""])


def to_junit(
    findings: Iterable[Finding], files: Iterable[str], *, name: str = "turnspec", skipped: Sequence[str] = ()
) -> str:
    """One test case per input file; each error finding is a failure of its file's case;
    each of the `skipped` files is a case of its own, `<skipped message=...>`.

    Each finding is one `text_line` (a CI system prints these bodies into its log), and
    every string put in the tree is `escaping.xml`: well-formed XML 1.0 whatever the data."""
    by_file: dict[str, list[Finding]] = {p: [] for p in files}
    for f in sorted(findings, key=location_key):
        by_file.setdefault(f.path.partition("#")[0], []).append(f)
    by_file = {p: by_file[p] for p in sorted(by_file, key=path_key)}
    import xml.etree.ElementTree as ET  # loaded only when a JUnit report is written

    root = ET.Element("testsuites", name=name)
    errors = {p: [f for f in fs if f.severity == Severity.ERROR] for p, fs in by_file.items()}
    suite = ET.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(by_file) + len(skipped)),
        failures=str(sum(1 for e in errors.values() if e)),
    )
    if skipped:
        suite.set("skipped", str(len(skipped)))

    def body(fs: list[Finding]) -> str:
        return escaping.xml("\n".join(escaping.text_line(f.format()) for f in fs))

    for path, fs in by_file.items():
        case = ET.SubElement(suite, "testcase", classname=name, name=escaping.xml(escaping.text_line(path)))
        if errors[path]:
            fail = ET.SubElement(case, "failure", message=f"{len(errors[path])} error(s)")
            fail.text = body(errors[path])
        warnings = [f for f in fs if f.severity != Severity.ERROR]
        if warnings:
            out = ET.SubElement(case, "system-out")
            out.text = body(warnings)
    for path in skipped:
        case = ET.SubElement(suite, "testcase", classname=name, name=escaping.xml(escaping.text_line(path)))
        ET.SubElement(case, "skipped", message=SKIPPED_MESSAGE)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


# -- the findings outputs: each declared once, every checking command offers all of them --


@dataclass(frozen=True)
class FindingsReport:
    """What a checking command hands a findings output: its findings (rule ids of
    `catalog`), the files it read (JUnit's cases), those it skipped, and its own name."""

    tool: str
    findings: Sequence[Finding]
    catalog: RuleCatalog
    files: Sequence[str] = ()
    skipped: Sequence[str] = ()
    # what the command did not judge, each with why (a suite case skipped): SARIF notes
    notes: Sequence[Finding] = ()


@dataclass(frozen=True)
class FindingsOutput:
    """One `-o` format for findings. Adding one is this declaration (a renderer from a
    `FindingsReport` to the text written to standard output) and a line in
    `FINDINGS_OUTPUTS`: `validate`, `conform`, `cassettes lint`, `replay-check` and
    `schema diff` all offer it from there."""

    name: str
    help: str
    render: Callable[[FindingsReport], str]
    step_summary: bool = False  # also append the markdown summary to $GITHUB_STEP_SUMMARY


def _sarif_text(r: FindingsReport) -> str:
    body = json.dumps(to_sarif(r.findings, r.catalog, skipped=r.skipped, notes=r.notes), indent=2, ensure_ascii=False)
    return escaping.json_text(body) + "\n"


def _github_text(r: FindingsReport) -> str:
    return to_github(r.findings, skipped=r.skipped)


def _junit_text(r: FindingsReport) -> str:
    return to_junit(r.findings, r.files, name=r.tool, skipped=r.skipped)


FINDINGS_OUTPUTS: tuple[FindingsOutput, ...] = (
    FindingsOutput("sarif", "SARIF 2.1.0 (GitHub code scanning)", _sarif_text),
    FindingsOutput("github", "GitHub workflow annotations, plus the step summary", _github_text, step_summary=True),
    FindingsOutput("junit", "JUnit XML (GitLab, Jenkins, Azure)", _junit_text),
)


def findings_output(name: str) -> FindingsOutput | None:
    """The findings output called `name`, None for a command's own rendering (text, json)."""
    return next((o for o in FINDINGS_OUTPUTS if o.name == name), None)


def output_choices(enum_name: str, *own: str) -> type[enum.StrEnum]:
    """A command's `-o` choices: its own renderings (`text`, `json`, ...; these win over a
    findings output of the same name), then every findings output."""
    names = [*own, *(o.name for o in FINDINGS_OUTPUTS if o.name not in own)]
    choices: type[enum.StrEnum] = enum.StrEnum(enum_name, {n: n for n in names})  # type: ignore[misc]  # a functional enum: its name is the command's
    return choices


def render_findings(name: str, report: FindingsReport) -> str:
    """`report` as the findings output `name` (and its step summary appended where the output
    has one and the runner set `$GITHUB_STEP_SUMMARY`)."""
    spec = findings_output(name)
    if spec is None:
        raise KeyError(f"no findings output named {name!r}")
    # every output lists findings by path, line and column (stably: ties keep the finding order)
    report = replace(report, findings=sorted(report.findings, key=location_key))
    target = os.environ.get("GITHUB_STEP_SUMMARY") if spec.step_summary else None
    if target:
        summary = step_summary(list(report.findings), report.catalog, title=report.tool, skipped=report.skipped)
        append_text(target, summary)
    return spec.render(report)


def write_findings(name: str, report: FindingsReport, out: TextIO) -> None:
    """`render_findings` written to `out`."""
    out.write(render_findings(name, report))
