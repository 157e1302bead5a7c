"""conformance.suite.checks.minted: two parses agree up to a consistent renaming of the tool
ids an adapter minted, never of the ones the wire issued (canonical §6.2, contract §4.1.1)."""

from __future__ import annotations

from typing import Any

from conformance.suite.checks.minted import WireIds, match_ids
from conformance.wire import registry


def use(i: str, name: str = "f") -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": name, "input": {}}


def result(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": []}


def minted(_: str) -> bool:
    return False


def test_a_consistent_renaming_of_minted_ids_matches_uses_results_and_events():
    def parse(a: str, b: str) -> dict[str, Any]:
        start = {"type": "tool_use_start", "tool_use_id": a, "content_block_index": 0}
        return {"content": [use(a), use(b), result(b), result(a)], "events": [start]}

    first, second = parse("tu_a", "tu_b"), parse("tu_x", "tu_y")
    r = match_ids(first, second, minted)
    assert r.problems == [] and r.renamed == {"tu_a": "tu_x", "tu_b": "tu_y"}
    assert r.apply(first) == second


def test_identical_parses_rename_nothing():
    r = match_ids([use("tu_a"), result("tu_a")], [use("tu_a"), result("tu_a")], minted)
    assert r.problems == [] and r.renamed == {}


def test_a_result_answering_another_call_is_no_renaming():
    r = match_ids([use("tu_a"), use("tu_b"), result("tu_a")], [use("tu_x"), use("tu_y"), result("tu_y")], minted)
    assert len(r.problems) == 1 and "answers a different call" in r.problems[0] and "canonical §6.2" in r.problems[0]


def test_two_calls_given_one_id_is_no_bijection():
    r = match_ids([use("tu_a"), result("tu_a"), result("tu_b")], [use("tu_x"), result("tu_x"), result("tu_x")], minted)
    assert any("not a bijection" in p for p in r.problems)


def test_two_calls_sharing_an_id_within_one_parse_fail_even_when_renamed_alike():
    r = match_ids([use("tu_a"), use("tu_a")], [use("tu_x"), use("tu_x")], minted)
    assert any("share id tu_a" in p for p in r.problems) and any("share id tu_x" in p for p in r.problems)


def test_a_wire_issued_id_must_match_exactly():
    wire = {"tu_a", "tu_x"}
    r = match_ids([use("tu_a")], [use("tu_x")], lambda cid: cid in wire)
    assert len(r.problems) == 1 and "contract §4.1.1" in r.problems[0]
    assert match_ids([use("tu_a")], [use("tu_a")], lambda cid: cid in wire).problems == []


def test_different_slot_counts_are_reported():
    r = match_ids([use("tu_a"), result("tu_a")], [use("tu_x")], minted)
    assert r.problems == ["2 tool-id slots in one parse, 1 in the other"]


def test_wire_ids_read_through_the_record():
    gemini = registry.get("gemini-generate-content")
    body = {
        "candidates": [
            {"content": {"parts": [{"functionCall": {"id": "fc_1", "name": "f"}}, {"functionCall": {"name": "g"}}]}}
        ]
    }
    assert WireIds.of(gemini, [body]) == WireIds(True, frozenset({"fc_1"}))
    ollama = registry.get("ollama-chat")
    reply = {"message": {"tool_calls": [{"id": "call_9", "function": {"name": "f"}}, {"function": {"name": "g"}}]}}
    assert WireIds.of(ollama, [reply]) == WireIds(True, frozenset({"call_9"}))
    # an API that issues every id: nothing may be renamed
    assert WireIds.of(registry.get("anthropic-messages"), [{}]).mintable is False
    # no record at all: no id is known to be the wire's, so none is held as issued (issue 43
    # item 7: a missing record never judges minted ids as provider ids; it asserted the defect)
    assert WireIds.of(None, [body]) == WireIds(True, frozenset())
