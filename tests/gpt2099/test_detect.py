"""Detection: gpt2099 claims its own shapes and never a canonical file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.benchmarks.synthetic import messages
from conformance.formats import detect_format
from conformance.formats.gpt2099.reader import PEEK_BYTES

from .conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name", ["thread-valid.jsonl", "thread-valid.nuon", "window-valid.json", "response-valid.json"]
)
def test_own_shapes_are_detected(name: str) -> None:
    fmt = detect_format(FIXTURES / name)
    assert fmt is not None and fmt.name == "gpt2099"


def test_canonical_example_stays_canonical() -> None:
    fmt = detect_format(ROOT / "conformance/data/examples/session.jsonl")
    assert fmt is not None and fmt.name == "canonical"


@pytest.mark.parametrize(
    "doc",
    [
        next(messages(1)),
        {
            "name": "read_file",
            "description": "d",
            "input_schema": {"type": "object"},
            "side_effects": "read",
        },
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "hi"}],
        },  # a wire request
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude",
        },  # a wire response
        [1, 2, 3],
    ],
)
def test_other_json_is_not_claimed(tmp_path: Path, doc: object) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc))
    fmt = detect_format(p)
    assert fmt is None or fmt.name != "gpt2099"


def test_large_thread_detected_from_its_first_bytes(tmp_path: Path) -> None:
    frame = json.loads((FIXTURES / "thread-valid.jsonl").read_text().splitlines()[0])
    frame["content"] = [{"type": "text", "text": "x" * (2 * PEEK_BYTES)}]
    p = tmp_path / "big.json"
    p.write_text(json.dumps([frame]))
    fmt = detect_format(p)
    assert fmt is not None and fmt.name == "gpt2099"
