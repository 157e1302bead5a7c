"""Issue 17, chibi CHB-40: system_prompt.md is the source of truth for the prompt chibi
injects (TF §context.jsonl Note, §Context Rebuilding); the transcript records each prompt
in a system_prompt_changed entry. A file the transcript does not hold is a warning
(CB215) and, when converting, a reported loss."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from chibi_helpers import FIXTURES, check, read_lines

from conformance.convert import convert


def _context(tmp_path: Path, prompt: bytes | None) -> Path:
    ctx = tmp_path / "default"
    shutil.copytree(FIXTURES / "default", ctx)
    if prompt is not None:
        (ctx / "system_prompt.md").write_bytes(prompt)
    return ctx


def _last_recorded() -> str:
    entries = read_lines(FIXTURES / "default" / "transcript" / "active.jsonl")
    return str([e for e in entries if e["entry_type"] == "system_prompt_changed"][-1]["content"])


def test_the_recorded_prompt_is_silent_even_with_an_editor_s_final_newline(tmp_path: Path) -> None:
    ctx = _context(tmp_path, (_last_recorded() + "\n").encode())
    assert check(ctx).findings == []
    lossy = convert("chibi", "canonical", ctx, tmp_path / "c.jsonl")
    assert not [f for f in lossy if Path(f.path).name == "system_prompt.md"]


@pytest.mark.parametrize(
    ("prompt", "says"),
    [
        (b"You are chibi. Be terse.\n", "differs from the last system_prompt_changed"),
        (b"\xff\xfeY\x00o\x00u\x00", "not UTF-8"),
    ],
)
def test_a_prompt_the_transcript_does_not_hold_is_a_warning_and_a_reported_loss(
    prompt: bytes, says: str, tmp_path: Path
) -> None:
    ctx = _context(tmp_path, prompt)
    found = check(ctx).findings
    assert [(Path(f.path).name, f.line, f.rule, f.severity) for f in found] == [
        ("system_prompt.md", 1, "CB215", "warning")
    ]
    assert says in found[0].message
    if b"\xff" not in prompt:
        assert "active.jsonl:5" in found[0].message  # where the last recorded prompt is
    lossy = [
        f for f in convert("chibi", "canonical", ctx, tmp_path / "c.jsonl") if Path(f.path).name == "system_prompt.md"
    ]
    assert len(lossy) == 1 and "not converted" in lossy[0].message


def test_no_recorded_prompt_at_all_is_named(tmp_path: Path) -> None:
    ctx = tmp_path / "legacy09"
    shutil.copytree(FIXTURES / "legacy09", ctx)
    (ctx / "system_prompt.md").write_text("You are chibi.\n")
    found = [f for f in check(ctx).findings if f.rule == "CB215"]
    assert len(found) == 1 and "no system_prompt_changed entry" in found[0].message
