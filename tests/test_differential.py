"""Schema oracle, compiled fast path and generated models agree on every verdict.

python-jsonschema is the reference. The corpus is the synthetic valid messages plus
targeted invalid documents, each breaking one constraint pydantic's defaults get wrong
(null in non-nullable optionals, "5" for 5, "true" for true, unknown keys, unions...).
Where pydantic cannot express a schema rule exactly, the case is listed in
KNOWN_DIFFERENCES with the reason, and the test asserts the difference is still there
(so a generator upgrade that fixes it is noticed).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError
from turnspec_models.canonical.v1.message import Message

from conformance.benchmarks.synthetic import messages
from conformance.core.schema_validation import SchemaValidator
from conformance.core.schemas import registry_for, schema_set

VALIDATOR = SchemaValidator(schema_set("canonical", "v1"), "message.json")
# the stock reference implementation, with no pattern fix: the schemas must mean the
# same to it (Python `re`) as to jsonschema-rs (Rust regex, ECMA-262 anchors)
STOCK = jsonschema.Draft202012Validator(
    schema_set("canonical", "v1")["message.json"], registry=registry_for(schema_set("canonical", "v1"))
)
BASE = list(messages(40, seed=11))
USER = next(m for m in BASE if m["role"] == "user")
ASSISTANT = next(m for m in BASE if m["role"] == "assistant" and len(m["content"]) > 1)
TOOL = next(m for m in BASE if m["role"] == "tool")


def edit(base: dict[str, Any], fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    fn(doc)
    return doc


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def f(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return f


def _del(path: str) -> Callable[[dict[str, Any]], None]:
    def f(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        del node[last]

    return f


USAGE = "metadata/usage"
CASES: dict[str, tuple[dict[str, Any], bool]] = {
    # (document, schema verdict expected)
    "valid user": (USER, True),
    "valid assistant": (ASSISTANT, True),
    "valid tool": (TOOL, True),
    "null status (not nullable)": (edit(USER, _set("metadata/status", None)), False),
    "null is_error (not nullable)": (edit(TOOL, _set("content/0/is_error", None)), False),
    "null cached_input_tokens": (edit(ASSISTANT, _set(f"{USAGE}/cached_input_tokens", None)), False),
    "null model (nullable)": (edit(USER, _set("metadata/model", None)), True),
    "null routing (nullable)": (edit(USER, _set("metadata/routing", None)), True),
    "'5' for integer": (edit(ASSISTANT, _set(f"{USAGE}/input_tokens", "5")), False),
    "true for integer": (edit(ASSISTANT, _set(f"{USAGE}/input_tokens", True)), False),
    "float 5.5 for integer": (edit(ASSISTANT, _set(f"{USAGE}/input_tokens", 5.5)), False),
    "'true' for boolean": (edit(TOOL, _set("content/0/is_error", "true")), False),
    "1 for boolean": (edit(TOOL, _set("content/0/is_error", 1)), False),
    "number for string": (edit(USER, _set("content/0/text", 5)), False),
    "bytes-like list for string": (edit(USER, _set("session_id", ["s"])), False),
    "negative tokens": (edit(ASSISTANT, _set(f"{USAGE}/output_tokens", -1)), False),
    "empty id": (edit(USER, _set("id", "")), False),
    "bad role": (edit(USER, _set("role", "robot")), False),
    "bad status": (edit(USER, _set("metadata/status", "done")), False),
    "bad routing mode": (edit(ASSISTANT, _set("metadata/routing/mode", "random")), False),
    "confidence above 1": (edit(ASSISTANT, _set("metadata/routing/confidence", 1.5)), False),
    "confidence int 1": (edit(ASSISTANT, _set("metadata/routing/confidence", 1)), True),
    "confidence 0.5": (edit(ASSISTANT, _set("metadata/routing/confidence", 0.5)), True),
    # issue 16 reversed five verdicts below: any RFC 3339 UTC time up to microseconds is
    # valid (the canonical encoding is a TS117 warning), cost_usd may be a JSON number
    # (TS118 warning), and messages, blocks and usage are open to additive fields
    # (§10.2/§10.3, TS010 warning)
    "timestamp without micros": (edit(USER, _set("created_at", "2026-05-08T12:00:00Z")), True),
    "timestamp with offset": (edit(USER, _set("created_at", "2026-05-08T12:00:00.000000+00:00")), True),
    "timestamp with 3 digits": (edit(USER, _set("created_at", "2026-05-08T12:00:00.123+00:00")), True),
    "timestamp with 7 digits": (edit(USER, _set("created_at", "2026-05-08T12:00:00.1234567Z")), False),
    "timestamp with +01:00": (edit(USER, _set("created_at", "2026-05-08T12:00:00+01:00")), False),
    "timestamp with trailing newline": (edit(USER, _set("created_at", "2026-05-08T12:00:00.000000Z\n")), False),
    "timestamp Z+newline short": (edit(USER, _set("created_at", "2026-05-08T12:00:00Z\n")), False),
    "cost as number": (edit(ASSISTANT, _set(f"{USAGE}/cost_usd", 0.5)), True),
    "cost as exponent string": (edit(ASSISTANT, _set(f"{USAGE}/cost_usd", "6.54E-4")), True),
    "cost exponent with trailing newline": (edit(ASSISTANT, _set(f"{USAGE}/cost_usd", "6.54E-4\n")), False),
    "cost negative number": (edit(ASSISTANT, _set(f"{USAGE}/cost_usd", -0.5)), False),
    "cost negative": (edit(ASSISTANT, _set(f"{USAGE}/cost_usd", "-0.5")), False),
    "cost with trailing newline": (edit(ASSISTANT, _set(f"{USAGE}/cost_usd", "0.5\n")), False),
    "missing required created_at": (edit(USER, _del("created_at")), False),
    "missing usage latency": (edit(ASSISTANT, _del(f"{USAGE}/latency_ms")), False),
    "unknown top-level key": (edit(USER, _set("extra", 1)), True),
    "unknown key in text block": (edit(USER, _set("content/0/bogus", 1)), True),
    "unknown key in usage": (edit(ASSISTANT, _set(f"{USAGE}/bogus", 1)), True),
    "known key of wrong type beside unknown ones": (
        edit(USER, _set("content/0", {"type": "text", "text": 5, "x": 1})),
        False,
    ),
    "unknown metadata key (open model)": (edit(USER, _set("metadata/trace_id", "x")), True),
    "unknown block type (tolerated)": (edit(USER, _set("content/0", {"type": "audio", "data": "AAAA"})), True),
    "known type, malformed, not unknown": (edit(USER, _set("content/0", {"type": "text", "text": 5})), False),
    "known type with trailing newline": (edit(USER, _set("content/0", {"type": "text\n", "x": 1})), True),
    "block without type": (edit(USER, _set("content/0", {"text": "hi"})), False),
    "block type not string": (edit(USER, _set("content/0", {"type": 5})), False),
    "empty block type": (edit(USER, _set("content/0", {"type": ""})), False),
    "tool_use input not object": (edit(ASSISTANT, _set("content/-1", None)), False),
    "image kind bad": (
        edit(
            USER,
            _set("content/0", {"type": "image", "source": {"kind": "ftp", "data": "x"}, "media_type": "image/png"}),
        ),
        False,
    ),
    "image media type upper case": (
        edit(
            USER,
            _set(
                "content/0",
                {"type": "image", "source": {"kind": "url", "data": "https://x/y.png"}, "media_type": "image/PNG"},
            ),
        ),
        True,
    ),
    "image media type with trailing newline": (
        edit(
            USER,
            _set(
                "content/0",
                {"type": "image", "source": {"kind": "url", "data": "https://x/y.png"}, "media_type": "image/png\n"},
            ),
        ),
        False,
    ),
    "image ok": (
        edit(
            USER,
            _set(
                "content/0",
                {"type": "image", "source": {"kind": "url", "data": "https://x/y.png"}, "media_type": "image/png"},
            ),
        ),
        True,
    ),
    "thinking null signature": (
        edit(ASSISTANT, _set("content/0", {"type": "thinking", "text": "t", "signature": None})),
        True,
    ),
    "thinking int signature": (
        edit(ASSISTANT, _set("content/0", {"type": "thinking", "text": "t", "signature": 5})),
        False,
    ),
    "nested unknown block in tool_result": (
        edit(TOOL, _set("content/0/content/0", {"type": "video", "url": "x"})),
        True,
    ),
    "nested malformed block in tool_result": (edit(TOOL, _set("content/0/content/0", {"type": "text"})), False),
    "schema_version 2": (edit(USER, _set("schema_version", 2)), False),
    "schema_version true": (edit(USER, _set("schema_version", True)), False),
    "provider_raw not object": (edit(USER, _set("metadata/provider_raw", [1])), False),
    "provider_raw object": (edit(USER, _set("metadata/provider_raw", {"stop_reason": "end_turn"})), True),
    "content not a list": (edit(USER, _set("content", {"type": "text", "text": "x"})), False),
    "not an object": ([USER], False),
}

# Schema rules pydantic cannot express exactly, each with its reason.
KNOWN_DIFFERENCES: dict[str, tuple[dict[str, Any], bool, bool]] = {
    # (document, schema verdict, model verdict)
    "5.0 for integer": (
        # JSON Schema counts a float with zero fraction as an integer (2020-12 core §4.2.2);
        # pydantic's StrictInt rejects every float.
        edit(ASSISTANT, _set(f"{USAGE}/input_tokens", 5.0)),
        True,
        False,
    ),
    "schema_version 1.0": (edit(USER, _set("schema_version", 1.0)), True, False),
}

# the tool_use in ASSISTANT is its last block
_bad_input = copy.deepcopy(ASSISTANT)
_bad_input["content"][-1]["input"] = "not an object"
CASES["tool_use input not object"] = (_bad_input, False)


def model_verdict(doc: Any) -> bool:
    try:
        Message.model_validate(doc)
    except ValidationError:
        return False
    return True


def model_json_verdict(doc: Any) -> bool:
    import orjson

    try:
        Message.model_validate_json(orjson.dumps(doc))
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("name", list(CASES))
def test_engines_agree(name: str) -> None:
    doc, expected = CASES[name]
    assert VALIDATOR.oracle_is_valid(doc) is expected, "oracle verdict"
    assert VALIDATOR.is_valid(doc) is expected, "jsonschema-rs fast path disagrees with the oracle"
    assert model_verdict(doc) is expected, "generated pydantic model (python mode) disagrees with the schema"
    assert model_json_verdict(doc) is expected, "generated pydantic model (JSON mode) disagrees with the schema"
    assert STOCK.is_valid(doc) is expected, "stock python-jsonschema (Python `re`, no pattern fix) disagrees"


def test_stock_engine_is_really_stock() -> None:
    # the proof above only counts if STOCK reads patterns with Python's `re.search`:
    # a bare `$` there also matches before a final newline
    probe = jsonschema.Draft202012Validator({"type": "string", "pattern": "^a$"})
    assert type(STOCK) is jsonschema.Draft202012Validator
    assert probe.is_valid("a\n")


def test_no_schema_pattern_uses_a_bare_dollar() -> None:
    """Issue 14: a pattern must mean the same in ECMA-262 and Python `re`; `$` does not
    (Python also matches before a final newline), `(?![\\s\\S])` does."""
    from conformance.core.schemas import versions

    bad = []
    for rev in versions("canonical"):
        for uri, doc in schema_set("canonical", rev).resources():
            stack: list[Any] = [doc]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    pat = node.get("pattern")
                    if isinstance(pat, str) and _bare_dollar(pat):
                        bad.append((uri, pat))
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
    assert bad == []


def _bare_dollar(pattern: str) -> bool:
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            return True
        i += 1
    return False


@pytest.mark.parametrize("name", [n for n, (_, ok) in CASES.items() if not ok and isinstance(CASES[n][0], dict)])
def test_schema_rejections_are_ts020_findings(name: str) -> None:
    """What the schema engines reject, `turnspec validate` reports as TS020 (located)."""
    from conformance.core.jsonio import Record
    from conformance.formats.base import Options
    from conformance.formats.canonical.checker import CanonicalRun

    doc, _ = CASES[name]
    found = CanonicalRun(Options()).check_message(Record("<doc>", 1, "", doc, 0))
    assert "TS020" in {f.rule for f in found} or "TS012" in {f.rule for f in found}, found


@pytest.mark.parametrize("name", list(KNOWN_DIFFERENCES))
def test_known_differences_still_hold(name: str) -> None:
    doc, schema_verdict, model = KNOWN_DIFFERENCES[name]
    assert VALIDATOR.oracle_is_valid(doc) is schema_verdict
    assert VALIDATOR.is_valid(doc) is schema_verdict
    assert STOCK.is_valid(doc) is schema_verdict
    assert model_verdict(doc) is model


@pytest.mark.parametrize("doc", BASE, ids=lambda d: d["id"])
def test_synthetic_corpus_is_valid_everywhere(doc: dict[str, Any]) -> None:
    assert VALIDATOR.oracle_is_valid(doc)
    assert VALIDATOR.is_valid(doc)
    assert STOCK.is_valid(doc)
    assert Message.model_validate(doc).model_dump(mode="json", exclude_unset=True) == doc
