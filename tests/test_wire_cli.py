"""`turnspec wire render` and `turnspec wire parse`."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.cli import main
from conformance.formats.canonical.memory import validate_messages
from conformance.suite.cassettes import load_cassette
from conformance.suite.scripts import conversation, mark

ROOT = Path(__file__).resolve().parents[1]


def _conv(tmp_path: Path, provider: str = "anthropic") -> Path:
    msgs, tools = conversation(provider, model="claude-sonnet-4-5")
    p = tmp_path / "conv.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [*tools, *msgs]), encoding="utf-8")
    return p


def test_render_anthropic_hoists_system_and_uses_the_session_model(tmp_path, capsys):
    assert main(["wire", "render", "--adapter", "anthropic", str(_conv(tmp_path))]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["path"] == "/v1/messages" and out["body"]["model"] == "claude-sonnet-4-5"
    assert out["body"]["system"] == mark("system-1") + "\n\n" + mark("system-2")
    assert [t["name"] for t in out["body"]["tools"]] == ["read_file", "search_code"]


def test_render_reports_drops_on_stderr(tmp_path, capsys):
    assert main(["wire", "render", "-a", "openai-chat", "--stream", str(_conv(tmp_path))]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["body"]["stream_options"] == {"include_usage": True}
    assert "dropped thinking block" in cap.err and mark("thinking") not in cap.out


def test_parse_stream_prints_events_then_a_valid_message(tmp_path, capsys):
    it = load_cassette(ROOT / "cassettes/openai-chat/tools.yaml").interactions[1]
    p = tmp_path / "stream.txt"
    p.write_text(it.response_text, encoding="utf-8")
    assert main(["wire", "parse", "--adapter", "openai-chat", "--stream", str(p)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["type"] == "message_start" and lines[-2]["type"] == "message_complete"
    msg = lines[-1]
    assert [b["type"] for b in msg["content"]] == ["tool_use", "tool_use"]
    assert validate_messages([msg], finish=False) == []


def test_parse_error_body_is_classified(tmp_path, capsys):
    p = tmp_path / "err.json"
    p.write_text(
        json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        encoding="utf-8",
    )
    assert main(["wire", "parse", "-a", "anthropic", "--status", "529", str(p)]) == 1
    assert json.loads(capsys.readouterr().out)["error_class"] == "rate_limit"


def test_bad_inputs_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": [\n', encoding="utf-8")
    assert main(["wire", "render", "-a", "anthropic", str(bad)]) == 2
    assert main(["wire", "parse", "-a", "anthropic", str(tmp_path / "missing.json")]) == 2
    notjson = tmp_path / "x.txt"
    notjson.write_text("hello", encoding="utf-8")
    assert main(["wire", "parse", "-a", "anthropic", str(notjson)]) == 2
    assert main(["wire", "render", "-a", "nope", str(bad)]) == 2
