"""The real gpt2099 samples: they validate, are detected, resolve and round-trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.api import expand, validate
from conformance.convert import convert
from conformance.formats.gpt2099 import resolve
from conformance.formats.gpt2099.convert import iter_turns

pytestmark = pytest.mark.samples


def _inputs(samples: Path) -> list[Path]:
    return sorted((samples / "gpt2099/providers/prepare-request").glob("*/input.json"))


def _responses(samples: Path) -> list[Path]:
    return sorted((samples / "gpt2099/providers/response-stream").glob("*/*/expected-aggregate.json"))


def test_every_context_window_input_validates(samples: Path) -> None:
    inputs = _inputs(samples)
    assert len(inputs) == 7
    report = validate(inputs)
    assert {f.format for f in report.files} == {"gpt2099"}
    assert report.errors == 0
    # none of the fixtures names a provider_ptr: the only finding is the call warning
    assert {f.rule for f in report.findings} == {"GP401"}


def test_nuon_thread_validates_and_resolves(samples: Path) -> None:
    path = samples / "gpt2099/threads-messages.nuon"
    report = validate([path])
    assert report.errors == 0 and report.files[0].records == 4
    window = resolve(path)
    assert [m["role"] for m in window["messages"]] == ["user", "assistant", "user", "assistant"]
    assert window["messages"][2]["content"][0]["type"] == "tool_result"
    assert window["options"] == {}
    # ids are lowercase in the export; gpt2099 reads them case-insensitively
    assert len(resolve(path, ["03DVNBYHRCESSQC0AJTGCBTIR"])["messages"]) == 3


def test_normalized_responses_validate(samples: Path) -> None:
    report = validate(_responses(samples))
    assert report.errors == 0
    assert {f.rule for f in report.findings} <= {"GP013"}  # server_tool_use, web_search_tool_result


def test_detection_claims_only_gpt2099_shapes(samples: Path) -> None:
    claimed = {p for p, f in expand([samples]) if f.name == "gpt2099"}
    expected = {*_inputs(samples), *_responses(samples), samples / "gpt2099/threads-messages.nuon"}
    # issue 17 (GPA-03, GPA-06): tool lists and streamer views are read as gpt2099 too;
    # recorded provider events and the expected wire requests stay unclaimed
    providers = samples / "gpt2099/providers"
    expected |= {*(providers / "tools").glob("*.json"), *providers.glob("response-stream/*/*/expected-streamer.jsonl")}
    assert claimed == expected


@pytest.mark.parametrize("kind", ["input", "response", "nuon"])
def test_real_samples_round_trip(samples: Path, tmp_path: Path, kind: str) -> None:
    if kind == "input":
        paths = _inputs(samples)
    elif kind == "response":
        paths = _responses(samples)
    else:
        paths = [samples / "gpt2099/threads-messages.nuon"]
    for i, src in enumerate(paths):
        mid, back = tmp_path / f"{i}.jsonl", tmp_path / f"{i}.json"
        convert("gpt2099", "canonical", src, mid)
        convert("canonical", "gpt2099", mid, back)
        assert list(iter_turns(back)) == list(iter_turns(src)), src
