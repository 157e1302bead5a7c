"""`turnspec replay-check` on the peer formats (issue 28): `--format` (and detection) reads
langchain, otel-genai and pydantic-ai files, standard input included, and each finding is
located at the source file's own line and message pointer, not in the canonical copy."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from test_replay_check import FakeAdapter

from conformance.cli import main
from conformance.replay import REFUSED, Target, replay_check, target
from conformance.replay.check import LOSSY

TESTS = Path(__file__).parent
LANGCHAIN = TESTS / "langchain_format" / "fixtures" / "valid_conversation.json"
OTEL = TESTS / "otel_genai_format" / "fixtures" / "valid_span.json"
PYDANTIC = TESTS / "pydantic_ai_format" / "fixtures" / "valid_history.json"


def _no_images() -> Target:
    return Target("no-images", FakeAdapter(supports_images=False), "fake:m")


@pytest.mark.parametrize(
    ("path", "fmt", "line", "pointer"),
    [
        (LANGCHAIN, "langchain", 3, "/1"),
        (OTEL, "otel-genai", 10, "/gen_ai.input.messages/0"),
        (PYDANTIC, "pydantic-ai", 2, "/0"),
    ],
)
def test_findings_are_located_in_the_source_file(path: Path, fmt: str, line: int, pointer: str) -> None:
    for given in (fmt, None):  # forced, and detected
        [v] = list(replay_check([path], [_no_images()], fmt=given))
        assert v.verdict == REFUSED
        [f] = [f for f in v.findings if f.rule == "RC001"]
        assert (f.path, f.line, f.pointer) == (str(path), line, pointer)
        assert "(at /content/1 of the message as canonical)" in f.message  # where inside, said in words


def test_openai_messages_are_located_in_the_source_file_too(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    chat.write_text(
        '[\n{"role": "system", "content": "Be brief."},\n'
        + '{"role": "user", "content": [{"type": "text", "text": "what?"}, '
        + json.dumps(image)
        + "]}\n]\n"
    )
    [v] = list(replay_check([chat], [_no_images()], fmt="openai-messages"))
    [f] = [f for f in v.findings if f.rule == "RC001"]
    assert (f.path, f.line, f.pointer) == (str(chat), 3, "/1")


def test_the_session_is_placed_at_its_first_source_message() -> None:
    [v] = list(replay_check([OTEL], [target("ollama")], fmt="otel-genai"))
    assert v.verdict == LOSSY  # ollama carries no image by URL
    assert (v.path, v.line) == (str(OTEL), 8)  # the system instructions
    assert [(f.rule, f.line, f.pointer) for f in v.findings] == [("RC101", 10, "/gen_ai.input.messages/0")]


def test_standard_input_with_format(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(LANGCHAIN.read_bytes())))
    rc = main(["replay-check", "--format", "langchain", "--to", "ollama", "-"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "-:3: /1 RC101" in out  # standard input's own line and pointer


def test_a_refused_conversion_is_an_input_problem_named_by_its_input(capsys: pytest.CaptureFixture[str]) -> None:
    bad = TESTS / "langchain_format" / "fixtures" / "LC101_unpaired.json"
    rc = main(["replay-check", "--format", "langchain", "--to", "ollama", str(bad)])
    out, err = capsys.readouterr()
    assert f"{bad}" in out + err and "LC101" in out + err
    assert rc != 0 or "RC900" in out + err


def test_a_forced_format_reads_only_its_files_in_a_folder(tmp_path: Path) -> None:
    """As `validate`: with --format, a folder walk reads what that format claims and lists the rest as skipped."""
    from conformance.replay import ReplaySummary  # function-level: only this test reads the summary

    (tmp_path / "lc.json").write_bytes(LANGCHAIN.read_bytes())
    (tmp_path / "span.json").write_bytes(OTEL.read_bytes())
    summary = ReplaySummary()
    verdicts = list(replay_check([tmp_path], [target("ollama")], fmt="langchain", summary=summary))
    assert [Path(v.path).name for v in verdicts] == ["lc.json"]
    assert summary.skipped == [str(tmp_path / "span.json")]
    both = list(replay_check([tmp_path], [target("ollama")]))  # detected: each by its own format
    assert sorted(Path(v.path).name for v in both) == ["lc.json", "span.json"]
