"""Issue 17, geppetto -> canonical: block-level fields canonical has no field for are kept
in `metadata.provider_raw.geppetto` and reported once each, with their location."""

from __future__ import annotations

from pathlib import Path

import orjson

from conformance.convert import convert

TURN = """\
blocks:
  - kind: user
    role: user
    payload: {text: hi}
    metadata:
      middleware: systemprompt
  - kind: reasoning
    role: assistant
    payload: {text: thinking, item_id: rs_1}
    metadata:
      openai_responses.response_id@v1: resp_1
      geppetto.inference_result@v1: &r
        provider: openai
        model: o4-mini
        stop_reason: end_turn
        finish_class: tool_calls_pending
        response_id: resp_1
        usage: {input_tokens: 3, output_tokens: 4}
        extra: {service_tier: default}
  - kind: tool_call
    role: assistant
    payload:
      id: call_1
      name: look
      args: {q: x}
      correlation: {run_id: r1, tool_call_id: call_1}
    metadata:
      agentmode: planner
      geppetto.inference_result@v1: *r
  - kind: tool_use
    payload: {id: call_1, result: ok}
"""


def _lossy(tmp_path: Path, text: str) -> list[tuple[int | None, str, str]]:
    src = tmp_path / "t.yaml"
    src.write_text(text)
    findings = convert("geppetto", "canonical", src, tmp_path / "c.jsonl", force=True)
    return [(f.line, f.pointer, f.message) for f in findings if f.rule == "GE900"]


def test_each_kept_field_is_reported_once_with_its_location(tmp_path: Path) -> None:
    got = _lossy(tmp_path, TURN)
    assert [(line, pointer) for line, pointer, _ in got] == [
        (6, "/blocks/0/metadata/middleware"),
        (9, "/blocks/1/payload/item_id"),
        (11, "/blocks/1/metadata/openai_responses.response_id@v1"),
        (26, "/blocks/2/payload/correlation"),
        (28, "/blocks/2/metadata/agentmode"),
        (12, "/blocks/1/metadata/geppetto.inference_result@v1"),  # once for the group it projects onto
    ]
    by_pointer = {pointer: message for _, pointer, message in got}
    assert "'correlation'" in by_pointer["/blocks/2/payload/correlation"]
    assert "'item_id'" in by_pointer["/blocks/1/payload/item_id"]
    result = by_pointer["/blocks/1/metadata/geppetto.inference_result@v1"]
    for name in ("extra", "response_id", "stop_reason 'end_turn'"):
        assert name in result
    assert all(message.endswith("kept only in provider_raw") for _, _, message in got)


def test_what_is_reported_is_what_provider_raw_keeps(tmp_path: Path) -> None:
    _lossy(tmp_path, TURN)
    messages = [orjson.loads(line) for line in (tmp_path / "c.jsonl").read_bytes().splitlines()]
    raw = messages[1]["metadata"]["provider_raw"]["geppetto"]["blocks"]
    assert raw[0]["block"]["payload"]["item_id"] == "rs_1"
    assert raw[1]["block"]["payload"]["correlation"] == {"run_id": "r1", "tool_call_id": "call_1"}
    assert raw[1]["block"]["metadata"]["agentmode"] == "planner"
    assert "item_id" not in str(messages[1]["content"])


def test_the_report_is_deterministic(tmp_path: Path) -> None:
    first = _lossy(tmp_path, TURN)
    assert first == _lossy(tmp_path, TURN)


def test_a_plain_turn_reports_none_of_these(tmp_path: Path) -> None:
    plain = "blocks:\n  - kind: user\n    role: user\n    payload: {text: hi}\n"
    assert _lossy(tmp_path, plain) == []


def test_fields_geppetto_s_serde_ignores_are_reported_where_they_are(tmp_path: Path) -> None:
    text = "note: exported\nblocks:\n  - kind: user\n    role: user\n    payload: {text: hi}\n    seen: true\n"
    assert [(line, pointer) for line, pointer, _ in _lossy(tmp_path, text)] == [(6, "/blocks/0/seen"), (1, "/note")]
