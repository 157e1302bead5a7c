"""Issue 25 for the OpenAI Responses API: an honest adapter nobody here wrote
(tests/third_party/their_openai_responses.py, from OpenAI's docs and the metis contract,
without reading the reference adapter) passes `turnspec conform` with no xfail, and each
false failure it met is fixed in the suite for the sentence it cites, while the defect the
check exists for still fails:

- TC403: the joined system text hoisted alone into a top-level field the wire record
  locates (Responses `instructions`, "A system (or developer) message inserted into the
  model's context") is placed as contract §4.1.2 asks ("The adapter hoists / injects as
  needed ... concatenated (with \\n\\n separator) before placement"); system text left out
  of it, or a system turn not opening the input, still fails;
- TC802: an input item with a `role` and `type: "message"` equals one without `type`
  (Responses reference, EasyInputMessage: `type` optional, "Always `message`"); any other
  difference in such an item still counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conformance.adapters.protocol import AdapterOptions, Message, ToolDefinition, WireRequest
from conformance.cli import main
from conformance.wire import equivalence
from conformance.wire import registry as wire_registry

ROOT = Path(__file__).resolve().parents[1]
THIRD = ROOT / "tests" / "third_party"
RESPONSES = f"{THIRD / 'their_openai_responses.py'}:TheirResponsesAdapter"
FOLDER = ROOT / "cassettes" / "openai-responses"
STREAM_RULES = ("TC103", "TC601", "TC602", "TC603", "TC604", "TC605", "TC606", "TC607", "TC609", "TC903")
RESPONSES_API = next(a for a in wire_registry.APIS if a.name == "openai-responses")


def _conform(capsys: Any, ref: str, cassettes: Path, *extra: str) -> tuple[int, dict[str, dict[str, Any]]]:
    rc = main(["conform", ref, "--cassettes", str(cassettes), "--output", "json", *extra])
    report = json.loads(capsys.readouterr().out)
    return rc, {r["rule"]: r for r in report["results"] if r["adapter"] != "(cassettes)"}


def test_the_honest_responses_adapter_passes_conform(capsys: Any) -> None:
    rc, results = _conform(capsys, RESPONSES, FOLDER, "--no-samples")
    failed = {k: r for k, r in results.items() if r["status"] not in ("pass", "skip")}
    assert rc == 0 and not failed, failed
    for rule in STREAM_RULES:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, rule
    assert results["TC403"]["status"] == "pass" and results["TC802"]["cases_run"] > 30


def test_the_honest_responses_adapter_passes_conform_on_real_samples(samples: Path, capsys: Any) -> None:
    rc, results = _conform(capsys, RESPONSES, FOLDER, "--samples", str(samples / "wire"))
    failed = {k: r for k, r in results.items() if r["status"] not in ("pass", "skip")}
    assert rc == 0 and not failed, failed
    assert results["TC701"]["cases_run"] > 10 and results["TC802"]["cases_run"] > 60


# -- TC403: system text hoisted to a top-level field the record locates ---------------------


def _system_variants() -> tuple[type, type]:
    sys.path.insert(0, str(THIRD))
    try:
        from their_openai_responses import TheirResponsesAdapter  # the adapter file's own module
    finally:
        sys.path.remove(str(THIRD))

    class FirstSystemOnly(TheirResponsesAdapter):  # type: ignore[misc, valid-type]
        """Hoists only the first SYSTEM message into `instructions` (loses the others)."""

        name = "first-system-only"

        def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
            systems = [i for i, m in enumerate(messages) if m.get("role") == "system"]
            kept = [m for i, m in enumerate(messages) if i not in systems[1:]]
            return super().to_wire(kept, tools, options)

    class SystemLast(TheirResponsesAdapter):  # type: ignore[misc, valid-type]
        """Sends the system text as the last input message instead of opening the input."""

        name = "system-last"

        def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
            wire = super().to_wire(messages, tools, options)
            body = dict(wire.body)
            text = body.pop("instructions", None)
            if isinstance(text, str):
                body["input"] = [*body["input"], {"role": "system", "content": text}]
            return WireRequest(wire.method, wire.path, wire.headers, body)

    return FirstSystemOnly, SystemLast


FirstSystemOnly, SystemLast = _system_variants()


def test_tc403_system_hoisted_to_instructions_passes(capsys: Any) -> None:
    rc, results = _conform(capsys, RESPONSES, FOLDER, "--no-samples", "--select", "TC403")
    assert rc == 0 and results["TC403"]["status"] == "pass", results["TC403"]
    assert results["TC403"]["cases_run"] > 5


def test_tc403_system_text_lost_from_instructions_still_fails(capsys: Any) -> None:
    rc, results = _conform(capsys, f"{__name__}:FirstSystemOnly", FOLDER, "--no-samples", "--select", "TC403")
    assert rc == 1 and results["TC403"]["status"] == "fail"
    assert any("want the first turn(s)" in c.get("message", "") for c in results["TC403"]["cases"])


def test_tc403_a_system_turn_not_opening_the_input_still_fails(capsys: Any) -> None:
    rc, results = _conform(capsys, f"{__name__}:SystemLast", FOLDER, "--no-samples", "--select", "TC403")
    assert rc == 1 and results["TC403"]["status"] == "fail"
    assert any("want the first turn(s)" in c.get("message", "") for c in results["TC403"]["cases"])


# -- TC802: `type: "message"` on a role-keyed input item --------------------------------------


def _body(*items: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4.1", "input": list(items)}


def test_tc802_an_input_message_typed_message_equals_one_without_type() -> None:
    recorded = _body({"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"})
    rendered = _body(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
        {"type": "message", "role": "assistant", "content": "Hello"},
    )
    assert equivalence.compare(RESPONSES_API, recorded, rendered) == []


def test_tc802_other_differences_in_a_typed_message_still_count() -> None:
    recorded = _body({"role": "user", "content": "Hi"})
    other_role = _body({"type": "message", "role": "developer", "content": "Hi"})
    other_text = _body({"type": "message", "role": "user", "content": "Hi!"})
    other_type = _body({"type": "function_call_output", "role": "user", "content": "Hi"})
    assert equivalence.compare(RESPONSES_API, recorded, other_role)
    assert equivalence.compare(RESPONSES_API, recorded, other_text)
    assert equivalence.compare(RESPONSES_API, recorded, other_type)
