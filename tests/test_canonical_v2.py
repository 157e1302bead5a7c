"""Canonical schema revision 2 (audio blocks, metadata.stop_reason) and §10.3 tolerance.

Revision 2 is additive, a minor revision of spec version 1 (§10.2): its messages keep
`schema_version: 1`, revision-2 readers validate them with the revision-2 schema, and
revision-1 readers accept them with warnings (TS010 unknown metadata field, TS011
unknown block), never errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings

from conformance.core.findings import Finding, Severity
from conformance.formats.base import FileStats, Options
from conformance.formats.canonical.checker import CanonicalRun
from conformance.strategies import conversations, documents

DATA = Path(__file__).parent / "data" / "canonical_v2"
FAST = settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def read(path: Path, revisions: tuple[str, ...] | None = ("v2",)) -> list[Finding]:
    """Findings of a revision-2 reader (opt-in since issue 9), or of `revisions`."""
    run = CanonicalRun(Options(), revisions=revisions)
    return [*run.validate(path, FileStats(str(path), "canonical")), *run.finish()]


def write(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return p


def test_revision2_reader_accepts_audio_session() -> None:
    assert read(DATA / "audio-session.jsonl") == []


def test_revision1_reader_accepts_audio_session_with_warnings() -> None:
    findings = read(DATA / "audio-session.jsonl", ("v1",))
    assert {(f.line, f.pointer, f.rule) for f in findings} == {
        (1, "/content/1", "TS011"),
        (2, "/content/1", "TS011"),
        (2, "/metadata/stop_reason", "TS010"),
    }
    assert all(f.severity == Severity.WARNING for f in findings)


def test_revision1_reader_accepts_generated_revision2_sessions(tmp_path: Path) -> None:
    # §10.3 checked by fuzzing: whatever a revision-2 writer produces, a revision-1
    # reader tolerates; the only findings are the two tolerance warnings
    seen: set[str] = set()

    @FAST
    @given(conversations(version="v2"))
    def check(session: list[dict[str, Any]]) -> None:
        path = write(tmp_path, session)
        assert read(path) == []
        findings = read(path, ("v1",))
        assert {f.rule for f in findings} <= {"TS010", "TS011"}, [f.format() for f in findings]
        assert all(f.severity == Severity.WARNING for f in findings)
        seen.update(f.rule for f in findings)

    check()
    assert seen == {"TS010", "TS011"}  # the property did exercise both tolerances


def test_revision1_reader_schema_accepts_every_revision2_message() -> None:
    # the same, document by document, on schema-generated (not rule-abiding) messages
    from conformance.core.schema_validation import SchemaValidator
    from conformance.core.schemas import schema_set

    v1 = SchemaValidator(schema_set("canonical", "v1"), "message.json")

    @settings(FAST, max_examples=80)
    @given(documents("message.json", version="v2"))
    def check(doc: dict[str, Any]) -> None:
        assert v1.is_valid(doc), v1.errors(doc)

    check()


def test_unknown_schema_version_is_reported_clearly(tmp_path: Path) -> None:
    msg = json.loads((DATA / "audio-session.jsonl").read_text().splitlines()[0])
    msg["schema_version"] = 2
    for revisions in (("v2",), ("v1",), None):
        findings = read(write(tmp_path, [msg]), revisions)
        assert [(f.rule, f.pointer, f.severity) for f in findings] == [("TS012", "/schema_version", Severity.ERROR)]
        assert "knows: 1" in findings[0].message
    msg["schema_version"] = "1"  # §4.1: an int
    findings = read(write(tmp_path, [msg]), None)
    assert ("TS020", "/schema_version") in {(f.rule, f.pointer) for f in findings}, [f.format() for f in findings]


def test_audio_follows_the_role_and_source_rules(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in (DATA / "audio-session.jsonl").read_text().splitlines()]
    audio = lines[0]["content"][1]
    system = {**lines[0], "role": "system", "content": [audio]}
    bad_b64 = json.loads(json.dumps(lines[0]))
    bad_b64["content"][1]["source"] = {"kind": "base64", "data": "not base64!"}
    abs_ref = json.loads(json.dumps(lines[0]))
    abs_ref["content"][1]["source"] = {"kind": "file_ref", "data": "/etc/passwd"}
    for msg, rule in ((system, "TS102"), (bad_b64, "TS116"), (abs_ref, "TS114")):
        findings = read(write(tmp_path, [msg]))
        assert [(f.rule, f.severity) for f in findings] == [(rule, Severity.ERROR)], [f.format() for f in findings]
        # a revision-1 reader skips the unknown block instead
        assert {f.rule for f in read(write(tmp_path, [msg]), ("v1",))} == {"TS011"}


def test_audio_media_type_must_be_audio(tmp_path: Path) -> None:
    msg = json.loads((DATA / "audio-session.jsonl").read_text().splitlines()[0])
    msg["content"][1]["media_type"] = "image/png"
    findings = read(write(tmp_path, [msg]))
    assert [(f.rule, f.pointer) for f in findings] == [("TS020", "/content/1/media_type")]


def test_stop_reason_is_checked_by_revision2(tmp_path: Path) -> None:
    msg = json.loads((DATA / "audio-session.jsonl").read_text().splitlines()[1])
    msg["metadata"]["stop_reason"] = "finished"
    assert [(f.rule, f.pointer) for f in read(write(tmp_path, [msg]))] == [("TS020", "/metadata/stop_reason")]
    assert sorted(f.rule for f in read(write(tmp_path, [msg]), ("v1",))) == ["TS010", "TS011"]


def test_default_reader_is_the_published_spec_and_tolerates_other_audio_shapes(tmp_path: Path) -> None:
    """Issue 9: a spec v1.1 transcript whose `audio` block has another shape than the
    drafted revision 2 passes the default reader (§10.3 unknown block, a warning); the
    drafted revision is opt-in (`--revision v2`, `revisions=`) and rejects it."""
    from typer.testing import CliRunner

    from conformance import validate
    from conformance.cli import app, main

    msg = json.loads((DATA / "audio-session.jsonl").read_text().splitlines()[0])
    msg["content"][1] = {"type": "audio", "format": "wav", "transcript": "hi", "bytes": 12}
    path = write(tmp_path, [msg])
    assert [(f.rule, f.severity) for f in read(path, None)] == [("TS011", Severity.WARNING)]
    assert [f.rule for f in validate([path]).findings] == ["TS011"]
    assert "TS020" in {f.rule for f in read(path, ("v2",))}
    runner = CliRunner()
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0
    v2 = runner.invoke(app, ["validate", "--revision", "v2", str(path)])
    assert v2.exit_code == 1 and "TS020" in v2.stdout
    assert main(["validate", "--revision", "v9", str(path)]) == 2
