"""`turnspec wire render` and `turnspec wire parse`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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


def _sse(*events: dict) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-x",
        "stop_reason": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
_BLOCK = [
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
]
_END = [
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
    {"type": "message_stop"},
]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("done-only", "data: [DONE]\n\n", "cut before its end"),
        ("after-stop", _sse(_START, *_BLOCK, *_END, *_BLOCK), "event 6, line 19: an event after the stream's closing"),
        ("second-start", _sse(_START, _START, *_BLOCK, *_END), "event 1, line 4: a second opening event"),
        ("json-body", json.dumps({"type": "message", "content": []}), "no server-sent event"),
        (
            "nan",
            _sse(_START).replace('"input_tokens": 5', '"input_tokens": NaN'),
            "event 0, line 1: event data is not JSON",
        ),
    ],
)
def test_parse_refuses_malformed_streams_with_their_position(tmp_path, capsys, name, text, where):
    p = tmp_path / f"{name}.txt"
    p.write_text(text, encoding="utf-8")
    assert main(["wire", "parse", "-a", "anthropic", "--stream", str(p)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"turnspec: {p}: ") and where in err and "Traceback" not in err


def test_parse_reads_a_cut_stream_as_partial_naming_what_is_missing(tmp_path, capsys):
    """Issue 41: a stream cut before its stop reason is read, as a partial message
    (canonical §4.3), with a warning naming what never arrived; it was refused whole."""
    p = tmp_path / "cut.txt"
    p.write_text(_sse(_START, *_BLOCK), encoding="utf-8")
    assert main(["wire", "parse", "-a", "anthropic", "--stream", str(p)]) == 0
    out, err = capsys.readouterr()
    message = json.loads(out.splitlines()[-1])
    assert message["metadata"]["status"] == "partial" and message["content"] == [{"type": "text", "text": "Hi"}]
    assert json.loads(out.splitlines()[-2])["stop_reason"] == "error"  # contract §6.5's partial message
    assert "cut before its end" in err and "before message_stop, with block(s) [0] open" in err


def test_parse_accepts_the_well_formed_stream(tmp_path, capsys):
    p = tmp_path / "ok.txt"
    p.write_text(_sse(_START, *_BLOCK, *_END), encoding="utf-8")
    assert main(["wire", "parse", "-a", "anthropic", "--stream", str(p)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["content"] == [{"type": "text", "text": "Hi"}]


def test_parse_of_deep_or_nan_json_bodies_is_a_located_input_error(tmp_path, capsys):
    for body in ("[" * 100_000 + "]" * 100_000, '{"a": NaN}'):
        p = tmp_path / "b.json"
        p.write_text(body, encoding="utf-8")
        assert main(["wire", "parse", "-a", "anthropic", str(p)]) == 2
        err = capsys.readouterr().err
        assert str(p) in err.replace("\n", "") and "Traceback" not in err


def test_render_non_list_content_is_one_line(tmp_path, capsys):
    msgs, _ = conversation("anthropic", thinking=False, images=False, tools=False)
    msgs[1]["content"] = "hello"
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    assert main(["wire", "render", "-a", "anthropic", str(p)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert f"{p}:2: /content: not a list of content blocks" in err


@pytest.mark.parametrize(
    "ref",
    [
        ":",
        "x:",
        ":y",
        "conformance.cli:main",
        "json:dumps",
        "os:system",
        "conformance.adapters.base:BaseAdapter",
        "a b:c",
    ],
)
def test_adapter_references_are_checked_before_calling(tmp_path, capsys, ref, monkeypatch):
    import conformance.cli

    called = []
    monkeypatch.setattr(conformance.cli, "main", lambda *a, **k: called.append(a) or 0)
    monkeypatch.setattr("os.system", lambda *a: called.append(a) or 0)
    assert main(["wire", "render", "-a", ref, str(_conv(tmp_path))]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert called == []
    assert "not a turnspec adapter" in err or "an adapter reference is" in err or "is abstract" in err


# -- issue 25 item 10 (Gemini): real recordings falsely rejected ------------------------------

GEMINI_DATA = ROOT / "tests" / "data" / "gemini"


@pytest.mark.parametrize("flags", [[], ["--stream"]])
def test_parse_accepts_a_gemini_json_array_stream(tmp_path, capsys, flags):
    """streamGenerateContent without `alt=sse` answers one JSON array of responses: read as
    that framing, with or without --stream (no URL says which; the body's `[` does)."""
    p = GEMINI_DATA / "json_array_stream.json"
    assert main(["wire", "parse", "--adapter", "gemini", *flags, str(p)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["type"] == "message_start" and lines[-2]["type"] == "message_complete"
    assert lines[-2]["stop_reason"] == "end_turn"
    msg = lines[-1]
    assert msg["content"] == [{"type": "text", "text": "The sky is blue because air scatters blue light."}]
    assert validate_messages([msg], finish=False) == []


@pytest.mark.parametrize(
    ("name", "stop"),
    [("int_enums.json", "max_tokens"), ("int_enums_blocked.json", None)],
)
def test_parse_accepts_integer_enums(tmp_path, capsys, name, stop):
    """`$alt=json;enum-encoding=int` bodies pass the response schema and read as their names."""
    assert main(["wire", "parse", "--adapter", "gemini", str(GEMINI_DATA / name)]) == 0
    out = capsys.readouterr()
    msg = json.loads(out.out)
    raw = msg["metadata"]["provider_raw"]["gemini"]
    if stop == "max_tokens":
        assert raw["finishReason"] == "MAX_TOKENS"
        assert msg["content"] == [{"type": "text", "text": "Paris is the capital of France."}]
    else:
        assert raw["blockReason"] == "SAFETY"


def test_parse_assembles_streamed_partial_function_call_arguments(tmp_path, capsys):
    p = GEMINI_DATA / "partial_args_stream.sse"
    assert main(["wire", "parse", "--adapter", "gemini", "--stream", str(p)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    msg = lines[-1]
    calls = [b for b in msg["content"] if b["type"] == "tool_use"]
    assert [(c["name"], sorted(c["input"])) for c in calls] == [
        ("write_file", ["content", "lines", "meta", "overwrite", "path"]),
        ("get_time", ["zone"]),
    ]
    assert calls[0]["input"]["content"] == '- buy milk\n- call "Ana"'
    assert validate_messages([msg], finish=False) == []


# -- every refusal of `wire render` names the file and line (issue 41) --------------------------

VALID_LINES = (ROOT / "tests" / "rules" / "canonical" / "valid.jsonl").read_text().splitlines()
TOOL_LINE = json.dumps(
    {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}, "side_effects": "read"}
)


def _critical_third() -> str:
    """The fixture with its assistant turn (line 3: thinking from Anthropic) marked critical."""
    msg = json.loads(VALID_LINES[2])
    msg["metadata"]["critical"] = True
    return "\n".join([*VALID_LINES[:2], json.dumps(msg), *VALID_LINES[3:]]) + "\n"


RENDER_REFUSED = {
    # rendered `messages` empty: the file holds no message (the schema wants one at least)
    "no-message": ("openai-chat", "", 1, "/messages"),
    "tools-only": ("openai-chat", TOOL_LINE + "\n", 1, "/messages"),
    # a block marked critical the API cannot carry (§4.2.2): the message that holds it
    "critical-openai-chat": ("openai-chat", _critical_third(), 3, "CriticalBlockError"),
    "critical-gemini": ("gemini", _critical_third(), 3, "CriticalBlockError"),
}


@pytest.mark.parametrize("case", list(RENDER_REFUSED))
def test_every_render_refusal_names_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    adapter, text, line, says = RENDER_REFUSED[case]
    src = tmp_path / "t.jsonl"
    src.write_text(text)
    code = main(["wire", "render", str(src), "-a", adapter])
    err = capsys.readouterr().err
    assert code in (1, 2) and len(err.splitlines()) == 1, (code, err)
    assert f"{src}:{line}: " in err and says in err and "internal error" not in err, err


def test_record_refuses_as_render_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`wire record` builds the same request: a critical block it cannot send is refused at
    its line before anything is sent (it went up as a traceback-less exit 3)."""
    src = tmp_path / "t.jsonl"
    src.write_text(_critical_third())
    code = main(["wire", "record", str(src), str(tmp_path / "c.yaml"), "-a", "openai-chat"])
    err = capsys.readouterr().err
    assert code == 1 and f"{src}:3: " in err and "CriticalBlockError" in err, (code, err)
    assert not (tmp_path / "c.yaml").exists()


def test_a_refusal_is_located_in_a_few_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The message a refusal is located at is found by bisection over the conversation so
    far: a handful of renders for 64 messages, not one per message (quadratic on a long one)."""
    from conformance.adapters.openai_chat import OpenAIChatAdapter

    critical = _critical_third().splitlines()[2]
    src = tmp_path / "t.jsonl"
    src.write_text("\n".join([VALID_LINES[1]] * 39 + [critical] + [VALID_LINES[1]] * 24) + "\n")
    renders = []
    real = OpenAIChatAdapter.to_wire

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        renders.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(OpenAIChatAdapter, "to_wire", counted)
    assert main(["wire", "render", str(src), "-a", "openai-chat"]) == 1
    assert f"{src}:40: CriticalBlockError" in capsys.readouterr().err
    assert len(renders) <= 2 + 7, len(renders)  # the whole, the empty one, log2(64) + 1 prefixes
