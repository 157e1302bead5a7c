"""Issue 17, chibi -> canonical: what only provider_raw keeps (the manifest, the partition
each entry lived in, agent addressees, flow-control markers) and what is dropped
(requests.jsonl records) is reported once each, with its location."""

from __future__ import annotations

import shutil
from pathlib import Path

from chibi_helpers import FIXTURES, read_lines, write_lines

from conformance.convert import convert
from conformance.core.findings import Finding


def _convert(src: Path, tmp_path: Path) -> list[Finding]:
    return convert("chibi", "canonical", src, tmp_path / "c.jsonl", force=True)


def _entries(ctx: Path) -> list[tuple[str, int, dict[str, object]]]:
    """(file name, line, entry) of every transcript entry, read from the fixture itself."""
    out = []
    for rel in ("transcript/partitions/1767225600-1767225666.jsonl", "transcript/active.jsonl"):
        for n, e in enumerate(read_lines(ctx / rel), start=1):
            out.append((Path(rel).name, n, e))
    return out


def test_flow_control_markers_and_addressees_are_reported_where_they_are(tmp_path: Path) -> None:
    found = _convert(FIXTURES / "default", tmp_path)
    entries = _entries(FIXTURES / "default")
    flow = {
        (name, line)
        for name, line, e in entries
        if e.get("flow_control") is True and e["entry_type"] != "control_transfer"
    }
    addressed = {(name, line) for name, line, e in entries if e["entry_type"] == "message" and e.get("role") == "agent"}
    assert len(flow) == 3 and len(addressed) == 2  # the fixture has both kinds
    assert {(Path(f.path).name, f.line) for f in found if f.pointer == "/flow_control"} == flow
    assert len([f for f in found if f.pointer == "/flow_control"]) == len(flow)
    to = [f for f in found if f.pointer == "/to"]
    assert {(Path(f.path).name, f.line) for f in to} == addressed and len(to) == len(addressed)
    assert all("'alice'" in f.message for f in to)


def test_v09_replies_to_the_literal_user_are_not_an_addressee(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    write_lines(
        src,
        [
            {"id": "550e8400-e29b-41d4-a716-446655440000", "timestamp": 1705123456, "from": "alice",
             "to": "default", "content": "hi", "entry_type": "message"},
            {"id": "550e8400-e29b-41d4-a716-446655440001", "timestamp": 1705123460, "from": "default",
             "to": "user", "content": "hello", "entry_type": "message"},
        ],
    )  # fmt: skip
    assert [f for f in convert("chibi", "canonical", src, tmp_path / "c.jsonl") if f.pointer == "/to"] == []


def test_the_manifest_is_reported_field_by_field(tmp_path: Path) -> None:
    found = _convert(FIXTURES / "default", tmp_path)
    manifest = [f for f in found if Path(f.path).name == "manifest.json"]
    assert sorted(f.pointer for f in manifest) == [
        "/partitions/0",
        "/partitions/0/bloom_file",
        "/rotation_policy",
    ]
    part = next(f for f in manifest if f.pointer == "/partitions/0")
    # the fixture's manifest: 1767225600-1767225666, 8 entries, 98 tokens
    for fact in ("1767225600-1767225666", "8 entries", "98 tokens", "which entries lived in it"):
        assert fact in part.message
    policy = next(f for f in manifest if f.pointer == "/rotation_policy")
    assert "max_entries 8" in policy.message and "max_tokens 50000" in policy.message


def test_requests_jsonl_is_reported_line_by_line(tmp_path: Path) -> None:
    ctx = tmp_path / "default"
    shutil.copytree(FIXTURES / "default", ctx)
    record = read_lines(ctx / "requests.jsonl")[0]
    write_lines(ctx / "requests.jsonl", [record, {**record, "timestamp": record["timestamp"] + 1}, record])
    found = [f for f in _convert(ctx, tmp_path) if Path(f.path).name == "requests.jsonl"]
    assert [(f.line, f.pointer) for f in found] == [(1, "/request"), (2, "/request"), (3, "/request")]


def test_the_report_is_deterministic(tmp_path: Path) -> None:
    def lines() -> list[tuple[str, int | None, str, str]]:
        return [(f.path, f.line, f.pointer, f.message) for f in _convert(FIXTURES / "default", tmp_path)]

    assert lines() == lines()


def test_fields_an_older_chibi_wrote_are_reported_where_they_are(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    write_lines(
        src,
        [
            {"id": "550e8400-e29b-41d4-a716-446655440000", "timestamp": 1705123456, "from": "alice",
             "to": "default", "content": "hi", "entry_type": "message", "written_by": "chibi 0.6"},
            {"id": "550e8400-e29b-41d4-a716-446655440001", "timestamp": 1705123460, "from": "system",
             "to": "default", "content": "Be brief.", "entry_type": "system_prompt_changed",
             "metadata": {"hash": "abc"}},
        ],
    )  # fmt: skip
    found = [f for f in convert("chibi", "canonical", src, tmp_path / "c.jsonl") if "does not document" in f.message]
    assert [(f.line, f.pointer) for f in found] == [(1, "/written_by"), (2, "/metadata/hash")]
