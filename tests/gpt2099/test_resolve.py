"""`resolve`: headish lookup, continues walk and options merge as gpt2099's ctx.nu does them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.core.errors import InputError
from conformance.formats.gpt2099 import ResolveError, deep_merge, inherited, resolve

from .conftest import FIXTURES

A, B, C, D = (
    "03f0aaaaaaaaaaaaaaaaaaaa1",
    "03f0aaaaaaaaaaaaaaaaaaab2",
    "03f0aaaaaaaaaaaaaaaaaaac3",
    "03f0aaaaaaaaaaaaaaaaaaad4",
)
VALID = FIXTURES / "thread-valid.jsonl"


def _text(window: dict) -> list[str]:
    return [b.get("text", b["type"]) for m in window["messages"] for b in m["content"]]


def _frames(tmp_path: Path, rows: list[tuple[str, dict, str]]) -> Path:
    p = tmp_path / "t.jsonl"
    p.write_text(
        "".join(json.dumps({"id": i, "meta": m, "content": [{"type": "text", "text": t}]}) + "\n" for i, m, t in rows)
    )
    return p


def test_default_head_is_the_last_turn_and_options_merge_oldest_first() -> None:
    w = resolve(VALID)
    assert [m["role"] for m in w["messages"]] == ["user", "assistant", "user", "assistant"]
    assert w["options"] == {"provider_ptr": "milli", "servers": ["fs"], "search": True}


def test_bookmark_resolves_to_last_turn_with_that_head() -> None:
    w = resolve(VALID, ["work"])  # A, B, C carry head "work"; C is the last
    assert _text(w)[-1] == "tool_result"
    assert len(w["messages"]) == 3


def test_ids_are_case_insensitive() -> None:
    assert len(resolve(VALID, [B.upper()])["messages"]) == 2


def test_diamond_repeats_turns_like_ctx_nu(tmp_path: Path) -> None:
    # ctx.nu walks breadth-first from D, prepending: D; B, C; A (from B), A (from C)
    p = _frames(tmp_path, [
        (A, {"options": {"provider_ptr": "p", "servers": ["x"]}}, "a"),
        (B, {"continues": [A]}, "b"),
        (C, {"continues": [A], "options": {"servers": ["y"]}}, "c"),
        (D, {"continues": [B, C]}, "d"),
    ])  # fmt: skip
    w = resolve(p)
    assert _text(w) == ["a", "a", "c", "b", "d"]
    assert w["options"] == {"provider_ptr": "p", "servers": ["y"]}


def test_cache_flag_only_when_true(tmp_path: Path) -> None:
    p = _frames(tmp_path, [(A, {"cache": True}, "a"), (B, {"continues": A, "cache": False}, "b")])
    assert [("cache" in m) for m in resolve(p)["messages"]] == [True, False]


def test_unknown_bookmark_error_matches_gpt2099() -> None:
    with pytest.raises(ResolveError, match="Headish 'nope' isn't an SCRU128 or valid bookmark"):
        resolve(VALID, ["nope"])


def test_missing_id() -> None:
    with pytest.raises(ResolveError, match="no turn with id"):
        resolve(VALID, ["03f0zzzzzzzzzzzzzzzzzzzz9"])


def test_cycle_is_refused_not_looped() -> None:
    with pytest.raises(InputError, match="GP20"):
        resolve(FIXTURES / "GP203-cycle.jsonl")


def test_records_resolve_as_a_chain() -> None:
    w = resolve(FIXTURES / "thread-valid.nuon", [B])
    assert [m["role"] for m in w["messages"]] == ["user", "assistant"]
    assert w["options"] == {}


def test_context_window_is_not_a_thread() -> None:
    with pytest.raises(InputError, match="context-window"):
        resolve(FIXTURES / "window-valid.json")


@pytest.mark.parametrize(
    ("old", "new", "merged"),
    [
        (
            {"a": 1, "b": {"c": 2, "d": 3}},
            {"b": {"d": 4, "e": 5}},
            {"a": 1, "b": {"c": 2, "d": 4, "e": 5}},
        ),
        ({"servers": ["a", "b"]}, {"servers": ["c"]}, {"servers": ["c"]}),
        ({"servers": ["a"]}, {"servers": None}, {"servers": None}),
        ({"t": [{"a": 1}, {"b": 2}]}, {"t": [{"a": 3}]}, {"t": [{"a": 3}, {"b": 2}]}),
        ({"x": {"y": 1}}, {"x": 5}, {"x": 5}),
    ],
)
def test_deep_merge_is_nushell_merge_deep(old: dict, new: dict, merged: dict) -> None:
    assert deep_merge(old, new) == merged


def test_inherited_wins_over_options_and_null_is_empty() -> None:
    assert inherited.delta({"options": {"a": 1}, "inherited": {"b": 2}}) == {"b": 2}
    assert inherited.delta({"options": None}) == {}
    assert inherited.present({"options": {}, "inherited": {}}) == ["inherited", "options"]


def test_cli_prints_the_window(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpt2099", "resolve", str(VALID), "work"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["options"]["provider_ptr"] == "milli"
    assert main(["gpt2099", "resolve", str(VALID), "nope"]) == 2
