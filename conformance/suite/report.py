"""Rendering a SuiteReport: text for terminals, JSON and Markdown matrices, JUnit XML for CI.

Reasons quote cassettes (URIs, names, bodies) and adapter names come from the command
line: every renderer puts them through `conformance.core.escaping`, the function of its sink.
"""

from __future__ import annotations

import html
import json
import math
import statistics
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core import escaping, ruledocs
from ..core.color import PLAIN, Palette
from ..core.findings import Finding, Severity
from ..wire import registry as wire_registry
from .outcome import SUITE_SUBJECT, RuleResult
from .rules import CATALOG, ESTIMATE_ABS_TOLERANCE, ESTIMATE_REL_TOLERANCE
from .runner import ADAPTER_SOURCE, SuiteReport, capability_of

MARK = {"pass": "pass", "fail": "FAIL", "skip": "skip", "warn": "warn"}
MD_MARK = {"pass": "✅ pass", "fail": "❌ fail", "skip": "⏭ skip", "warn": "⚠ warn"}


def _info(rule: str) -> tuple[str, str]:
    if rule in CATALOG:
        info = CATALOG[rule]
        return info.section, info.summary
    return "", ""


def skipped_interactions(report: SuiteReport) -> list[tuple[str, str]]:
    """Recorded interactions no adapter serves: reported, never dropped silently (TC800)."""
    return [(o.subject, o.message) for o in report.outcomes if o.rule == "TC800" and o.status == "skip"]


def _skip_summary(report: SuiteReport) -> list[str]:
    counts: dict[str, int] = {}
    for _, why in skipped_interactions(report):
        counts[why] = counts.get(why, 0) + 1
    return [f"{n} x {why}" for why, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def _quantile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank quantile (q in 0..1) of a sorted, non-empty list."""
    k = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[k]


def estimate_distribution(report: SuiteReport) -> dict[str, dict[str, Any]]:
    """TC701 per adapter: how far estimates were from recorded usage (relative error),
    as a distribution, so a band that only passes because it is wide shows."""
    out: dict[str, dict[str, Any]] = {}
    for a in report.adapters:
        errs = sorted(
            abs(o.measure) for o in report.outcomes if o.rule == "TC701" and o.adapter == a and o.measure is not None
        )
        if errs:
            out[a] = {
                "cases": len(errs),
                "median_abs_relative_error": round(statistics.median(errs), 4),
                "p95_abs_relative_error": round(_quantile(errs, 0.95), 4),
                "max_abs_relative_error": round(errs[-1], 4),
            }
    return out


def _cases(report: SuiteReport) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every case of every (rule, adapter): what it was run on, its status, the capability
    it exercised, and its message (why it failed or was skipped)."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for o in report.outcomes:
        case: dict[str, Any] = {"subject": o.subject, "status": o.status, "capability": capability_of(o)}
        if o.message:
            case["message"] = o.message
        if o.traceback:
            case["traceback"] = o.traceback
        out.setdefault((o.rule, o.adapter), []).append(case)
    return out


def as_dict(report: SuiteReport) -> dict[str, Any]:
    cases = _cases(report)
    matrix: dict[str, dict[str, str]] = {}
    for r in report.results:
        matrix.setdefault(r.rule, {})[r.adapter] = r.status
    return {
        "adapters": report.adapters,
        "rules": [{"id": rid, "section": _info(rid)[0], "summary": _info(rid)[1]} for rid in matrix],
        "matrix": matrix,
        "results": [
            {
                "rule": r.rule,
                "adapter": r.adapter,
                "status": r.status,
                "passed": r.passed,
                "failed": r.failed,
                "skipped": r.skipped,
                "reasons": r.reasons,
                "cases_run": r.cases_run,
                "cases_skipped": r.skipped,
                "skip_reasons": r.skip_reasons,
                "capabilities_exercised": r.capabilities,
                "cases": cases.get((r.rule, r.adapter), []),
            }
            for r in report.results
        ],
        "capabilities": report.capabilities,
        "capability_declaration": report.declarations,
        "cross_provider": report.pairs,
        "recordings": report.recordings,
        "skipped_interactions": [{"interaction": i, "reason": why} for i, why in skipped_interactions(report)],
        "estimate_tolerance": {
            "relative": ESTIMATE_REL_TOLERANCE,
            "absolute_tokens": ESTIMATE_ABS_TOLERANCE,
        },
        "estimate_error": estimate_distribution(report),
        "accepted_request_differences": {
            a.name: [str(d) for d in a.accepted_differences] for a in wire_registry.APIS if a.accepted_differences
        },
        "summary": {
            "verdict": report.verdict,
            "checks": len(report.results),  # (rule, adapter) cells; the counts below add up to it
            "failed": len(report.failed),
            "warned": len(report.warned),  # advisory rules (an error with --strict)
            "passed": sum(1 for r in report.results if r.status == "pass"),
            "skipped": sum(1 for r in report.results if r.status == "skip"),
            "cases": report.cases_run + report.cases_skipped,
            "cases_run": report.cases_run,
            "cases_skipped": report.cases_skipped,
            "unexercised_capabilities": [f"{a}.{c}" for a, c in report.unexercised],
            "cassettes": report.cassettes_read,
            "elapsed_s": round(report.elapsed_s, 2),
        },
    }


def to_json(report: SuiteReport) -> str:
    body = json.dumps(escaping.json_safe(as_dict(report)), indent=2, ensure_ascii=False)
    return escaping.json_text(body) + "\n"


TEXT_LIMIT = 10
"""The text report lists at most this many reasons of one check, then says how many more
there are (`... and N more`; the JSON report holds every case)."""


def _more(shown: int, total: int) -> list[str]:
    """The line saying a list was cut: `... and N more` (none when nothing was left out)."""
    return [f"      ... and {total - shown} more (-o json lists every case)"] if total > shown else []


SHARED_CLAUSE_MIN = 60  # characters: a shorter common ending is left on each reason


def shared_clause(reasons: list[str]) -> str:
    """The parenthesized clause every one of two or more `reasons` ends with (` (compared up
    to ...'s declared equivalences: ...)`), for the text report to print once; "" when they
    share none of at least `SHARED_CLAUSE_MIN` characters."""
    if len(reasons) < 2:
        return ""
    first = reasons[0]
    n = 0
    while n < len(first) and all(len(x) > n and x[-1 - n] == first[-1 - n] for x in reasons[1:]):
        n += 1
    common = first[len(first) - n :]
    for i in range(len(common) - 1):
        if common[i : i + 2] == " (" and _closes_at_end(common[i + 1 :]):
            clause = common[i:]
            return clause if len(clause) >= SHARED_CLAUSE_MIN and all(len(x) > len(clause) for x in reasons) else ""
    return ""


def _closes_at_end(text: str) -> bool:
    """`text` is one parenthesized group: the `(` it opens with closes at its last character."""
    depth = 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0:
            return i == len(text) - 1
    return False


def _text_result(r: RuleResult, verbose: bool, palette: Palette) -> list[str]:
    """One check's line (escaped, then coloured) and, when it failed or warned, its reasons;
    with -v, its skipped cases with their reasons too; a crash's traceback under its reason
    (the first of the check; every one with -v). A list cut at `TEXT_LIMIT` says how many
    more it holds."""
    counts = f"{r.passed} passed, {r.failed} failed, {r.skipped} skipped"
    mark = MARK[r.status]
    colored = f"{palette.rule(escaping.text(r.rule))} {palette.status(mark, r.status)}{' ' * (4 - len(mark))}"
    lines = [f"  {colored}  {escaping.text(_info(r.rule)[1])}  ({counts})"]
    if r.status in ("fail", "warn"):
        # a clause every reason shown ends with (what TC802 compared up to) is printed once, after them
        clause = shared_clause(r.reasons[:TEXT_LIMIT])
        for line in r.explained(every_traceback=verbose, limit=TEXT_LIMIT):
            if line in r.reasons:
                lines.append(escaping.text_line(f"      - {line[: len(line) - len(clause)]}"))
            else:
                lines.append(escaping.text_line(f"        {line}"))
        if clause:
            lines.append(escaping.text_line(f"      each of these {clause.strip()[1:-1]}"))
        lines += _more(min(len(r.reasons), TEXT_LIMIT), r.failed)
    if verbose and (r.skipped or r.status == "skip"):
        # each skipped case once per reason (`skip_reasons` holds each distinct one)
        why = r.skip_reasons or r.reasons
        if r.status != "skip":
            lines.append(f"      skipped ({r.skipped}):")
        lines += [escaping.text_line(f"      - {x}") for x in why[:TEXT_LIMIT]]
        lines += _more(min(len(why), TEXT_LIMIT), len(why))
    return lines


def to_text(
    report: SuiteReport, *, verbose: bool = False, failures_only: bool = False, palette: Palette = PLAIN
) -> str:
    """The report for a terminal: each line an `escaping.text_line`; with `palette` on,
    rule ids, marks and the verdict coloured around the escaped text. `failures_only`: per
    adapter, only its failing checks (with their reasons), then the summary line."""
    lines: list[str] = []  # each already escaped (and coloured)

    def add(line: str) -> None:
        lines.append(escaping.text_line(line))

    estimates = estimate_distribution(report)
    for a in report.adapters:
        if failures_only:
            failing = [r for r in report.results if r.adapter == a and r.status == "fail"]
            if failing:
                add(f"{a}")
            for r in failing:
                lines += _text_result(r, verbose, palette)
            continue
        add(f"{a}")
        for r in report.results:
            if r.adapter == a:
                lines += _text_result(r, verbose, palette)
        if a in report.declarations:
            add(f"  capabilities declared per {report.declarations[a]}")
        caps = report.capabilities.get(a)
        if caps:
            add(
                "  capabilities declared true, cases run: "
                + ", ".join(f"{c} {n}" + (" (none!)" if n == 0 else "") for c, n in caps.items())
            )
        est = estimates.get(a)
        if est:
            add(
                f"  TC701 estimate error over {est['cases']} recordings: median {est['median_abs_relative_error']:.0%}, "
                f"p95 {est['p95_abs_relative_error']:.0%}"
            )
    skipped = _skip_summary(report)
    if skipped and not failures_only:
        add(f"skipped recorded interactions ({len(skipped_interactions(report))}):")
        for line in skipped:
            add(f"  - {line}")
    d = as_dict(report)["summary"]
    lines.append(escaping.text(recordings_line(report)))
    word = report.verdict
    head = palette.verdict(word == "OK") if word != "NOTHING CHECKED" else palette.status(word, "skip")
    if word == "NOTHING CHECKED":
        add("no case of an adapter ran: every selected check was skipped (-v lists why)")
    lines.append(head + escaping.text(f": {summary_counts(d)} over {d['cassettes']} cassette(s) in {d['elapsed_s']} s"))
    return "".join(line + "\n" for line in lines)


def summary_counts(d: dict[str, Any]) -> str:
    """`N checks: P passed, F failed, S skipped; C cases, K skipped` (checks are (rule,
    adapter) cells, cases what they judged), from `as_dict`'s summary."""
    warned = f"{d['warned']} warned (advisory), " if d["warned"] else ""
    return (
        f"{d['checks']} checks: {d['passed']} passed, {d['failed']} failed, {warned}{d['skipped']} skipped; "
        f"{d['cases']} cases, {d['cases_skipped']} skipped"
    )


def recordings_line(report: SuiteReport) -> str:
    """What the run replayed: each cassette folder with its count, and the third-party
    recordings with what asked for them (or that none were asked for)."""
    rec = report.recordings
    own = ", ".join(f"{folder} ({n})" for folder, n in rec.get("folders", {}).items()) or "none"
    for name, asked in rec.get("folders_not_found", {}).items():
        own += (
            f"; {name} asks for {', '.join(asked)}: no such folder in turnspec's cassettes, --cassettes or "
            "./cassettes, so its checks that replay recordings skip (an exec child names its folders in "
            "hello's `cassette_folders`)"
        )
    if rec.get("samples") is None:
        third = f"third-party recordings: none ({rec.get('samples_source') or 'none given'})"
    else:
        third = f"third-party recordings: {rec['samples']} ({rec['samples_cassettes']}, from {rec['samples_source']})"
    return f"recordings: cassette folders {own}; {third}"


_cell = escaping.md  # every table cell and list item that holds a name, a section or a reason


def to_markdown(report: SuiteReport) -> str:
    out = [
        "# turnspec conform",
        "",
        "| rule | section | check | " + " | ".join(map(_cell, report.adapters)) + " |",
        "|---|---|---|" + "---|" * len(report.adapters),
    ]
    by = {(r.rule, r.adapter): r for r in report.results}
    notes: list[str] = []
    for rid in dict.fromkeys(r.rule for r in report.results):
        section, summary = _info(rid)
        cells = []
        for a in report.adapters:
            r = by.get((rid, a))
            if r is None:
                cells.append("")
                continue
            cell = MD_MARK[r.status]
            if r.status != "pass" and r.reasons:
                notes.append(f"{len(notes) + 1}. **{_cell(rid)} / {_cell(a)}**: " + _cell("; ".join(r.reasons[:3])))
                cell += f" [{len(notes)}]"
            cells.append(cell)
        out.append(f"| {_cell(rid)} | {_cell(section)} | {_cell(summary)} | " + " | ".join(cells) + " |")
    if report.pairs:
        names = sorted({p.split("→")[0] for p in report.pairs} | {p.split("→")[1] for p in report.pairs})
        out += [
            "",
            "## Cross-provider replay (rows: produced by, columns: serialized through)",
            "",
            "| from \\ to | " + " | ".join(map(_cell, names)) + " |",
            "|---|" + "---|" * len(names),
        ]
        for src in names:
            row = []
            for dst in names:
                st = report.pairs.get(f"{src}→{dst}")
                row.append(
                    ""
                    if st is None
                    else ("❌ " + _cell(",".join(k for k, v in st.items() if v == "fail")))
                    if "fail" in st.values()
                    else "✅"
                )
            out.append(f"| {_cell(src)} | " + " | ".join(row) + " |")
    if notes:
        out += ["", "## Reasons", "", *notes]
    skipped = skipped_interactions(report)
    if skipped:
        out += [
            "",
            f"## Skipped recorded interactions ({len(skipped)})",
            "",
            *[f"- {_cell(line)}" for line in _skip_summary(report)],
        ]
    d = as_dict(report)["summary"]
    out += [
        "",
        f"{report.verdict}: {summary_counts(d)}; {d['cassettes']} cassettes; {d['elapsed_s']} s",
        "",
    ]
    return "\n".join(out)


def _xml(text: str) -> str:
    """A line for JUnit: one `text_line` (CI systems print these into their logs), XML 1.0."""
    return escaping.xml(escaping.text_line(text))


def to_junit(report: SuiteReport) -> str:
    root = ET.Element("testsuites", name="turnspec conform")
    for a in report.adapters:
        rs = [r for r in report.results if r.adapter == a]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_xml(a),
            tests=str(len(rs)),
            failures=str(sum(r.status == "fail" for r in rs)),
            skipped=str(sum(r.status == "skip" for r in rs)),
        )
        for r in rs:
            case = ET.SubElement(
                suite, "testcase", classname=_xml(f"turnspec.{a}"), name=_xml(f"{r.rule} {_info(r.rule)[1]}")
            )
            said: list[str] = []  # the case's system-out
            if r.status == "fail":
                f = ET.SubElement(case, "failure", message=f"{r.failed} case(s) failed")
                f.text = "\n".join(map(_xml, r.explained()))
            elif r.status == "skip":
                ET.SubElement(case, "skipped", message=_xml("; ".join(r.reasons[:3])))
            elif r.status == "warn":  # advisory: a passing case whose output says why it warned
                said += [f"advisory warning ({r.failed} case(s))", *r.reasons]
            if r.skipped:  # every check's skipped cases, with their reasons (each distinct one)
                said += [f"{r.skipped} case(s) skipped:", *(f"- {x}" for x in r.skip_reasons or r.reasons)]
            if said:
                ET.SubElement(case, "system-out").text = "\n".join(map(_xml, said))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


_HTML_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#1b1f24}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left}
th{background:#f6f8fa}td.pass{background:#dafbe1}td.fail{background:#ffebe9;font-weight:600}
td.skip{background:#f6f8fa;color:#57606a}td.warn{background:#fff8c5}td a{color:inherit}ol li{margin:.3em 0}code{font-size:12px}
p.verdict{font-size:16px;font-weight:600;padding:6px 10px;border-radius:4px;display:inline-block}
p.verdict.pass{background:#dafbe1}p.verdict.fail{background:#ffebe9}
"""


def to_html(report: SuiteReport) -> str:
    """A self-contained page, Bowtie-style: the check x adapter table and the N x N replay
    matrix, one cell per pair with its verdict, each failing or skipped cell linking to
    its reasons below. No script, no external asset. Data is `escaping.text` (a line break or
    control character in it shows as an escape: the page is also printed to logs), then
    HTML-escaped."""

    def esc(s: str) -> str:
        return html.escape(escaping.text(s))

    by = {(r.rule, r.adapter): r for r in report.results}
    reasons: list[tuple[str, list[str]]] = []

    def link(title: str, lines: list[str]) -> str:
        reasons.append((title, lines))
        return f' <a href="#r{len(reasons)}">[{len(reasons)}]</a>'

    rows = []
    for rid in dict.fromkeys(r.rule for r in report.results):
        section, summary = _info(rid)
        cells = []
        for a in report.adapters:
            r = by.get((rid, a))
            if r is None:
                cells.append("<td></td>")
                continue
            note = link(f"{rid} / {a}", r.reasons[:20]) if r.status != "pass" and r.reasons else ""
            counts = f"{r.passed}/{r.passed + r.failed}" + (f", {r.skipped} skipped" if r.skipped else "")
            cells.append(f'<td class="{r.status}" title="{esc(counts)}">{esc(MARK[r.status])}{note}</td>')
        head = f'<a href="#help-{esc(rid.lower())}">{esc(rid)}</a>' if rid in CATALOG else esc(rid)
        rows.append(f"<tr><th>{head}</th><td>{esc(section)}</td><td>{esc(summary)}</td>{''.join(cells)}</tr>")
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>turnspec conform</title>',
        f"<style>{_HTML_STYLE}</style></head><body>",
        "<h1>turnspec conform</h1>",
        _html_verdict(report),
        "<h2>Checks</h2><table><tr><th>rule</th><th>section</th><th>check</th>"
        + "".join(f"<th>{esc(a)}</th>" for a in report.adapters)
        + "</tr>",
        *rows,
        "</table>",
    ]
    if report.pairs:
        names = sorted({p.split("→")[0] for p in report.pairs} | {p.split("→")[1] for p in report.pairs})
        out.append(
            "<h2>Cross-provider replay</h2><p>Rows: the adapter that produced the history; columns: the adapter it is replayed through.</p>"
        )
        out.append("<table><tr><th>from \\ to</th>" + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr>")
        for src in names:
            cells = []
            for dst in names:
                pair = f"{src}→{dst}"
                st = report.pairs.get(pair)
                if st is None:
                    cells.append("<td></td>")
                    continue
                failed = [k for k, v in st.items() if v == "fail"]
                if failed:
                    why = [
                        f"{o.rule}: {o.message}" for o in report.outcomes if pair in o.subject and o.status == "fail"
                    ]
                    cells.append(f'<td class="fail">FAIL {esc(",".join(failed))}{link(pair, why[:20] or failed)}</td>')
                else:
                    cells.append('<td class="pass">pass</td>')
            out.append(f"<tr><th>{esc(src)}</th>{''.join(cells)}</tr>")
        out.append("</table>")
    if reasons:
        out.append("<h2>Reasons</h2><ol>")
        for i, (title, lines) in enumerate(reasons, 1):
            items = "".join(f"<li><code>{esc(x)}</code></li>" for x in lines)
            out.append(f'<li id="r{i}"><b>{esc(title)}</b><ul>{items}</ul></li>')
        out.append("</ol>")
    skipped = skipped_interactions(report)
    if skipped:
        out.append(f"<h2>Skipped recorded interactions ({len(skipped)})</h2><ul>")
        out += [f"<li>{esc(line)}</li>" for line in _skip_summary(report)]
        out.append("</ul>")
    # each check's help, as `turnspec rule ID` and SARIF `help` give it (ruledocs)
    helped = [rid for rid in dict.fromkeys(r.rule for r in report.results) if rid in CATALOG]
    if helped:
        out.append("<h2>What each check requires</h2>")
        for rid in helped:
            text = "\n".join(esc(line) for line in ruledocs.help_text(CATALOG[rid]).splitlines())
            uri = html.escape(ruledocs.help_uri(rid))
            out.append(
                f'<details id="help-{esc(rid.lower())}"><summary>{esc(rid)}: {esc(CATALOG[rid].summary)}</summary>'
                f'<pre>{text}</pre><p><a href="{uri}">{uri}</a></p></details>'
            )
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _html_verdict(report: SuiteReport) -> str:
    """The page's first line: the text report's own verdict line (OK or FAIL and the counts),
    so a reader sees the outcome before the tables, in the words the terminal shows (each
    text line is already `escaping.text_line`, then HTML-escaped)."""
    line = to_text(report, failures_only=True).rstrip("\n").rsplit("\n", 1)[-1]
    verdict = "pass" if not report.exit_code else "fail"
    return f'<p class="verdict {verdict}" id="verdict">{html.escape(line)}</p>'


def findings(report: SuiteReport) -> list[Finding]:
    """Each failing case as a Finding, for the CI renderers: located at the recording it
    replayed (the cassette's path relative to the working folder, the repository in CI, and
    the line its interaction starts on; `<cassette>#<n>` keeps the interaction as the
    pointer), else at the adapter's class (its file, when inside the working folder, and the
    line of its `class` statement), else nowhere physical (path "": the message names the
    adapter)."""
    out: list[Finding] = []
    warned = {(r.rule, r.adapter) for r in report.warned}
    for o in report.outcomes:
        if o.status != "fail":
            continue
        severity = Severity.WARNING if (o.rule, o.adapter) in warned else Severity.ERROR
        base, sep, rest = o.subject.partition("#")
        index = rest.split(" ")[0]
        pointer = f"/interactions/{index}" if sep and index.isdigit() else ""
        where, line = _adapter_location(report, o.adapter)
        if sep and base.endswith((".yaml", ".yml")):
            where, line = base, None
        found = report.locations.get((o.adapter, f"{base}#{index}")) if pointer else None
        if found is not None:
            where, line = _repo_path(found[0]), found[1]
        message = f"{o.adapter}: {o.subject}: {o.message}" if o.message else f"{o.adapter}: {o.subject}"
        out.append(Finding(where, line, pointer, o.rule, severity, message))
    return out


def skipped_findings(report: SuiteReport) -> list[Finding]:
    """Each skipped case of an adapter as a Finding located as `findings` locates a failing
    one, its message the reason it was skipped (SARIF lists them as notes): what the suite
    did not judge is in the CI output too, never only in the text report's -v."""
    skipped = [replace(o, status="fail") for o in report.outcomes if o.status == "skip" and o.adapter != SUITE_SUBJECT]
    return findings(replace(report, outcomes=skipped, results=[]))


def _adapter_location(report: SuiteReport, adapter: str) -> tuple[str, int | None]:
    """Where `adapter`'s class is defined, relative to the working folder; ("", None) when it
    is outside it (an installed package) or unknown: code scanning places neither."""
    found = report.locations.get((adapter, ADAPTER_SOURCE))
    if found is None:
        return "", None
    where = _repo_path(found[0])
    return (where, found[1]) if not Path(where).is_absolute() else ("", None)


def _repo_path(path: Path) -> str:
    """`path` relative to the working folder (the repository root in CI, which is what
    annotations and SARIF locations resolve against), else as it is."""
    full = path.resolve()
    cwd = Path.cwd().resolve()
    return full.relative_to(cwd).as_posix() if full.is_relative_to(cwd) else str(path)


# conform's own renderings; the findings outputs (SARIF, GitHub, ...) render `findings(report)`
RENDERERS = {
    "text": to_text,
    "json": to_json,
    "md": to_markdown,
    "junit": to_junit,
    "html": to_html,
}
