"""Statements of chibi's transcript-format.md checked here beyond tests/chibi/test_chibi_rules.py,
each with a failing case (docs/traceability.md, "Peer format chibi")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from chibi_helpers import check, edit_entry, read_lines, write_lines


def test_role_on_a_non_message_entry_is_an_undocumented_field(ctx_copy: Callable[[str], Path]) -> None:
    # TF §Fields (HEAD): `role` is "absent on ... non-message types"; chibi's serde ignores it
    d = ctx_copy("default")
    edit_entry(d, "active.jsonl", 2, lambda e: e.update(role="user"))  # a control_transfer
    hits = [(Path(f.path).name, f.pointer, f.severity) for f in check(d).findings]
    assert ("active.jsonl", "/role", "warning") in hits
    assert {f.rule for f in check(d).findings} == {"CB027"}


def _anchor_copy(d: Path, target: str | None) -> None:
    """context.jsonl's anchor as a copy with its own id naming `target` (None: the
    transcript anchor it copies) in metadata.transcript_anchor_id."""
    path = d / "context.jsonl"
    values = read_lines(path)
    anchor_id = values[0]["id"]
    values[0]["id"] = "11111111-2222-4333-8444-555555555555"
    values[0]["metadata"]["transcript_anchor_id"] = target or anchor_id
    write_lines(path, values)


def test_transcript_anchor_id_must_name_the_transcript_anchor(ctx_copy: Callable[[str], Path]) -> None:
    # TF §Metadata Structure: transcript_anchor_id is the "Reference to corresponding transcript entry ID"
    d = ctx_copy("default")
    _anchor_copy(d, None)
    assert check(d).findings == []
    _anchor_copy(d, "99999999-2222-4333-8444-555555555555")
    assert [(f.rule, Path(f.path).name) for f in check(d).findings] == [("CB212", "context.jsonl")]
