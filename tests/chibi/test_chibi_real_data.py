"""Issue 17, chibi: what real chibi writes validates (with warnings where useful) and converts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from chibi_helpers import check, read_lines, write_lines

from conformance.convert import convert


def _errors(path: Path) -> list[tuple[str, str]]:
    return [(f.rule, f.message) for f in check(path).findings if f.severity == "error"]


def _drop_tool_call_ids(ctx: Path) -> None:
    for path in [*(ctx / "transcript").rglob("*.jsonl"), ctx / "context.jsonl"]:
        if path.is_file():
            lines = read_lines(path)
            for e in lines:
                if e["entry_type"] in ("tool_call", "tool_result"):
                    e.pop("tool_call_id", None)
            write_lines(path, lines)


def test_tool_call_id_is_optional_and_paired_by_position(ctx_copy: Callable[[str], Path], tmp_path: Path) -> None:
    ctx = ctx_copy("default")
    _drop_tool_call_ids(ctx)
    assert _errors(ctx) == []
    out = tmp_path / "c.jsonl"
    convert("chibi", "canonical", ctx, out)
    msgs = read_lines(out)
    uses = [b for m in msgs for b in m["content"] if b["type"] == "tool_use"]
    results = [b for m in msgs for b in m["content"] if b["type"] == "tool_result"]
    assert len(uses) == len(results) == 1 and results[0]["tool_use_id"] == uses[0]["id"]
    # and back: the entries get no tool_call_id they did not have
    back = tmp_path / "back"
    convert("canonical", "chibi", out, back)
    assert not [e for e in read_lines(back / "transcript" / "active.jsonl") if "tool_call_id" in e]


def test_positional_result_without_a_call_is_still_an_error(ctx_copy: Callable[[str], Path]) -> None:
    ctx = ctx_copy("default")
    _drop_tool_call_ids(ctx)
    for path in (ctx / "transcript").rglob("*.jsonl"):
        lines = [e for e in read_lines(path) if e["entry_type"] != "tool_call"]
        write_lines(path, lines)
    assert "CB202" in {r for r, _ in _errors(ctx)}


def _rolling_compaction(ctx: Path, dirty: bool) -> None:
    """chibi's rolling compaction: the anchor goes to the transcript, context.jsonl is
    rewritten without one, and `.dirty` says it will be rebuilt."""
    active = ctx / "transcript" / "active.jsonl"
    lines = read_lines(active)
    last = lines[-1]
    anchor = {
        "id": "9b2c1d4e-0000-4000-8000-000000000001",
        "timestamp": last["timestamp"] + 1,
        "from": "system",
        "to": "default",
        "content": "Context compacted",
        "entry_type": "compaction",
        "metadata": {"summary": "rolled up"},
    }
    write_lines(active, [*lines, anchor])
    context = [e for e in read_lines(ctx / "context.jsonl") if e["entry_type"] != "compaction"][1:]
    write_lines(ctx / "context.jsonl", context)
    if dirty:
        (ctx / ".dirty").write_text("")


def test_dirty_context_is_stale_not_broken(ctx_copy: Callable[[str], Path]) -> None:
    ctx = ctx_copy("default")
    _rolling_compaction(ctx, dirty=True)
    report = check(ctx)
    assert [f for f in report.findings if f.severity == "error"] == []
    stale = [f for f in report.findings if f.rule == "CB213"]
    assert len(stale) == 1 and stale[0].severity == "warning" and stale[0].path.endswith("context.jsonl")


def test_without_the_marker_the_same_state_is_an_error(ctx_copy: Callable[[str], Path]) -> None:
    ctx = ctx_copy("default")
    _rolling_compaction(ctx, dirty=False)
    assert {"CB211", "CB212"} & {r for r, _ in _errors(ctx)}


@pytest.mark.parametrize(
    ("edit", "rule"),
    [
        (lambda e: e.update(entry_type="retitled"), "CB026"),
        (lambda e: e.update(metadata={"hash": "abc123"}), "CB027"),
        (lambda e: e.update(legacy_field=1), "CB027"),
    ],
)
def test_old_and_unknown_entries_are_tolerated_with_a_warning(
    ctx_copy: Callable[[str], Path], tmp_path: Path, edit: Callable[[dict[str, object]], None], rule: str
) -> None:
    ctx = ctx_copy("default")
    part = next((ctx / "transcript" / "partitions").glob("*.jsonl"))
    lines = read_lines(part)
    i = next(i for i, e in enumerate(lines) if e["entry_type"] == "system_prompt_changed")
    edit(lines[i])
    write_lines(part, lines)
    report = check(ctx)
    assert [f for f in report.findings if f.severity == "error"] == []
    assert [f.rule for f in report.findings if f.severity == "warning" and f.path == str(part)] == [rule]
    # it converts, and the entry comes back unchanged
    out, back = tmp_path / "c.jsonl", tmp_path / "back"
    convert("chibi", "canonical", ctx, out)
    convert("canonical", "chibi", out, back)
    assert read_lines(back / "transcript" / part.relative_to(ctx / "transcript"))[i] == lines[i]


# -- field-level constraints enforced only through the schema rule (CB020) ---------------


@pytest.mark.parametrize(
    ("index", "field", "value", "pointer"),
    [
        (1, "role", "assistant", "/role"),  # chibi's roles are user, agent, system
        (1, "flow_control", "yes", "/flow_control"),
        (1, "timestamp", -5, "/timestamp"),
        (2, "content", 7, "/content"),
    ],
)
def test_schema_only_field_constraints(
    ctx_copy: Callable[[str], Path], index: int, field: str, value: object, pointer: str
) -> None:
    ctx = ctx_copy("default")
    path = ctx / "transcript" / "active.jsonl"
    lines = read_lines(path)
    lines[index][field] = value
    write_lines(path, lines)
    hits = [f for f in check(ctx).findings if f.path == str(path) and f.rule == "CB020"]
    assert hits and any(f.pointer.startswith(pointer) for f in hits), [(f.rule, f.pointer) for f in hits]
