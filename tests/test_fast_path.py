"""The canonical fast path reports exactly what the exact path reports, for any input.

Three engines: the fast path (`formats/canonical/fast/`, msgspec Structs generated
from the schemas), the exact path (`Options(exact=True)`: strict parse, jsonschema-rs,
every rule function) and python-jsonschema, the reference oracle. On corpora with broken
lines of many kinds (byte-level and semantic mutations of the synthetic corpus, the
schema-derived mutations of `conformance.strategies`, every rule fixture) the fast and
exact reports must be equal byte for byte, under every selection and option; every line
the oracle rejects must carry the exact path's TS020 and no line it accepts may. The
fast model is generated from the schema files at first use; the drift tests below fail
when it stops following them (field names, order, required fields) or when a schema
uses a keyword the generator does not translate.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.api import validate
from conformance.benchmarks.realistic import agent_messages
from conformance.benchmarks.synthetic import PRICING_YAML, messages
from conformance.core.findings import Selection
from conformance.core.jsonio import dumps
from conformance.core.schema_validation import SchemaValidator
from conformance.core.schemas import schema_set
from conformance.formats import FileStats, Options
from conformance.formats.canonical import CanonicalRun
from conformance.formats.canonical import fast as fast_module
from conformance.formats.canonical import fastmodel as FM
from conformance.formats.canonical.engine import FAMILIES, MESSAGE, fast_covered, registered_rules
from conformance.formats.canonical.fast import BatchPattern, FastPath, _batchable, _fixed_classes
from conformance.formats.canonical.fast import blocks as fast_blocks
from conformance.formats.canonical.fast.mirror import Mirror
from conformance.strategies import documents, invalid_documents

HERE = Path(__file__).parent
RULES = HERE / "rules" / "canonical"
TOOLS = RULES / "tools.json"
PRICING = RULES / "pricing.yaml"
ORACLE = SchemaValidator(schema_set("canonical", "v1"), "message.json")
SYNTH_TOOLS = [
    {"name": n, "description": n, "side_effects": "read",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["path"]}}
    for n in ("read_file", "search_code", "run_tests")
]  # fmt: skip


def _run(path: Path, options: Options) -> tuple[list[tuple[Any, ...]], int, int]:
    """(findings, records, messages the fast path cleared) of one run over `path`."""
    run = CanonicalRun(options, revisions=options.revisions or None)
    stats = FileStats(str(path), "canonical")
    found = [*run.validate(path, stats), *run.finish()]
    cleared = run.fast.cleared if run.fast is not None else 0
    return [(f.path, f.line, f.pointer, f.rule, f.severity, f.message) for f in found], stats.records, cleared


def same(path: Path, **kw: Any) -> int:
    """Assert fast == exact on `path` (findings in order, records, and the JSON report
    byte for byte); return how many messages the fast path cleared."""
    fast, n_fast, cleared = _run(path, Options(**kw))
    exact, n_exact, none = _run(path, Options(exact=True, **kw))
    assert none == 0
    assert fast == exact
    assert n_fast == n_exact
    a = dumps(validate([path], Options(**kw)).as_dict())
    b = dumps(validate([path], Options(exact=True, **kw)).as_dict())
    assert a == b
    return cleared


# -- a corpus with broken lines of many kinds ------------------------------------------


def _line(doc: Any) -> bytes:
    return dumps(doc)


Mut = Callable[[dict[str, Any]], Any]


def _set(path: str, value: Any) -> Mut:
    def go(m: dict[str, Any]) -> Any:
        *head, last = path.split(".")
        node: Any = m
        for k in head:
            node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return m

    return go


def _inner(m: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    """`block` inside the message's first tool result (a new one if it has none)."""
    for b in m.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "tool_result":
            b.setdefault("content", []).append(block)
            return m
    m["content"].append({"type": "tool_result", "tool_use_id": "tu_01JZ0000000000000000000000", "content": [block]})
    return m


def _del(path: str) -> Mut:
    def go(m: dict[str, Any]) -> Any:
        *head, last = path.split(".")
        node: Any = m
        for k in head:
            node = node[int(k)] if isinstance(node, list) else node[k]
        node.pop(last, None)
        return m

    return go


# semantic mutations (the line stays compact JSON in the writer's key order)
SEMANTIC: dict[str, Mut] = {
    "unknown-top-field": _set("extra", 1),
    "unknown-meta-field": _set("metadata.trace", "t"),
    "unknown-block-field": _set("content.0.lang", "en"),
    "unknown-block": lambda m: m["content"].append({"type": "video", "url": "u"}) or m,
    "nested-tool-result": lambda m: (
        m["content"].insert(
            0,
            {
                "type": "tool_result",
                "tool_use_id": "tu_01JZ0000000000000000000000",
                "content": [{"type": "tool_result", "tool_use_id": "tu_01JZ0000000000000000000000", "content": []}],
            },
        )
        or m
    ),
    "schema-version-2": _set("schema_version", 2),
    "schema-version-true": _set("schema_version", True),
    "schema-version-str": _set("schema_version", "1"),
    "role-bad": _set("role", "robot"),
    "status-partial": _set("metadata.status", "partial"),
    "status-cancelled": _set("metadata.status", "cancelled"),
    "status-error-no-meta": lambda m: {**m, "metadata": {"status": "error"}},
    "id-lowercase": lambda m: {**m, "id": m["id"].lower()},
    "id-not-ulid": _set("id", "msg-1"),
    "id-empty": _set("id", ""),
    "id-zero": _set("id", "00000000000000000000000000"),
    "created-offset": lambda m: {**m, "created_at": m["created_at"][:-1] + "+00:00"},
    "created-millis": lambda m: {**m, "created_at": m["created_at"][:23] + "Z"},
    "created-unreal": lambda m: {**m, "created_at": "2026-02-30" + m["created_at"][10:]},
    "created-month-13": lambda m: {**m, "created_at": "2026-13" + m["created_at"][7:]},  # the canonical shape
    "created-hour-24": lambda m: {**m, "created_at": m["created_at"][:11] + "24" + m["created_at"][13:]},
    "created-leap-second": lambda m: {**m, "created_at": m["created_at"][:17] + "60" + m["created_at"][19:]},
    "created-early": _set("created_at", "2000-01-01T00:00:00.000000Z"),
    "created-newline": lambda m: {**m, "created_at": m["created_at"] + "\n"},
    "created-bad": _set("created_at", "yesterday"),
    "content-empty": _set("content", []),
    "content-null": _set("content", None),
    "text-not-str": _set("content.0.text", 5),
    # the opaque strings decode as raw JSON (`fast.OPAQUE`): their type is proven per batch
    "text-null": _set("content.0.text", None),
    "text-true": _set("content.0.text", True),
    "text-list": _set("content.0.text", ["a"]),
    "text-object": _set("content.0.text", {"a": "b"}),
    "text-empty": _set("content.0.text", ""),
    "inner-text-not-str": lambda m: _inner(m, {"type": "text", "text": 7}),
    "inner-text-ok": lambda m: _inner(m, {"type": "text", "text": "inner \u00fc:"}),
    "thinking-text-not-str": lambda m: m["content"].append({"type": "thinking", "text": {"a": 1}}) or m,
    "redacted-data-not-str": lambda m: m["content"].append({"type": "redacted_thinking", "data": [1]}) or m,
    "redacted-data-null": lambda m: m["content"].append({"type": "redacted_thinking", "data": None}) or m,
    "model-no-colon": _set("metadata.model", "claude"),
    "model-space": _set("metadata.model", "anthropic:claude sonnet"),
    "model-nbsp": _set("metadata.model", "anthropic:claude\u00a0x"),
    "model-null": _set("metadata.model", None),
    "provider-other": _set("metadata.provider", "google"),
    "model-and-other-provider": lambda m: _set("metadata.provider", "google")(
        _set("metadata.model", "openai:gpt-5")(m)
    ),
    "chosen-other": _set("metadata.routing.chosen_model", "openai:gpt-5"),
    "routing-null": _set("metadata.routing", None),
    "routing-mode-bad": _set("metadata.routing.mode", "random"),
    "confidence-high": _set("metadata.routing.confidence", 1.5),
    "confidence-int": _set("metadata.routing.confidence", 1),
    "usage-null": _set("metadata.usage", None),
    "usage-negative": _set("metadata.usage.input_tokens", -1),
    "usage-float": _set("metadata.usage.latency_ms", 1.0),
    "usage-bigint": _set("metadata.usage.input_tokens", 10**30),
    "cost-number": _set("metadata.usage.cost_usd", 0.5),
    "cost-exponent": _set("metadata.usage.cost_usd", "6.54E-4"),
    "cost-wrong": _set("metadata.usage.cost_usd", "0.1"),
    "cost-leading-zero": _set("metadata.usage.cost_usd", "01.5"),
    "cost-trailing-newline": lambda m: _set(
        "metadata.usage.cost_usd", str(m["metadata"].get("usage", {}).get("cost_usd", "1")) + "\n"
    )(m),
    "pricing-version-unknown": _set("metadata.usage.pricing_version", "1999-01-01"),
    "cached-tokens": _set("metadata.usage.cached_input_tokens", 100),
    "cached-zero": _set("metadata.usage.cached_input_tokens", 0),
    "parent-null": _set("metadata.parent_tool_use_id", None),
    "parent-other": _set("metadata.parent_tool_use_id", "tu_01JZ0000000000000000000009"),
    "provider-raw-deep-250": _set("metadata.provider_raw", json.loads('{"a":' * 250 + "1" + "}" * 250)),
    "provider-raw-deep-199": _set("metadata.provider_raw", json.loads('{"a":' * 199 + "1" + "}" * 199)),
    "provider-raw-null": _set("metadata.provider_raw", None),
    "provider-raw-list": _set("metadata.provider_raw", [1]),
    "stop-reason-cancelled": _set("metadata.stop_reason", "cancelled"),
    "audio-block": lambda m: (
        m["content"].append({"type": "audio", "source": {"kind": "base64", "data": "AAAA"}, "media_type": "audio/wav"})
        or m
    ),
    "image-text-type": lambda m: (
        m["content"].append({"type": "image", "source": {"kind": "base64", "data": "AAAA"}, "media_type": "text/plain"})
        or m
    ),
    "image-upper-type": lambda m: (
        m["content"].append(
            {"type": "image", "source": {"kind": "url", "data": "https://x/y.png"}, "media_type": "IMAGE/PNG"}
        )
        or m
    ),
    "image-file-ref-abs": lambda m: (
        m["content"].append(
            {"type": "image", "source": {"kind": "file_ref", "data": "/etc/passwd"}, "media_type": "image/png"}
        )
        or m
    ),
    "image-file-ref-up": lambda m: (
        m["content"].append(
            {"type": "image", "source": {"kind": "file_ref", "data": "a/../../b.png"}, "media_type": "image/png"}
        )
        or m
    ),
    "image-bad-base64": lambda m: (
        m["content"].append({"type": "image", "source": {"kind": "base64", "data": "@@@"}, "media_type": "image/png"})
        or m
    ),
    "image-bad-media": lambda m: (
        m["content"].append({"type": "image", "source": {"kind": "base64", "data": "AAAA"}, "media_type": "png"}) or m
    ),
    "image-kind-bad": lambda m: (
        m["content"].append({"type": "image", "source": {"kind": "ftp", "data": "x"}, "media_type": "image/png"}) or m
    ),
    "thinking-block": lambda m: m["content"].append({"type": "thinking", "text": "t", "signature": None}) or m,
    # a single block of a type the role may not hold (TS102 on a one-block message)
    "only-thinking": _set("content", [{"type": "thinking", "text": "t"}]),
    "only-image": _set(
        "content", [{"type": "image", "source": {"kind": "base64", "data": "AAAA"}, "media_type": "image/png"}]
    ),
    "redacted-block": lambda m: m["content"].append({"type": "redacted_thinking", "data": "x"}) or m,
    "tool-use-added": lambda m: (
        m["content"].append(
            {"type": "tool_use", "id": "tu_01JZ0000000000000000000000", "name": "read_file", "input": {"path": "a"}}
        )
        or m
    ),
    "tool-use-bad-id": lambda m: (
        m["content"].append({"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a"}}) or m
    ),
    "tool-use-camel": lambda m: (
        m["content"].append(
            {"type": "tool_use", "id": "tu_01JZ0000000000000000000001", "name": "ReadFile", "input": {}}
        )
        or m
    ),
    "tool-use-unknown-tool": lambda m: (
        m["content"].append({"type": "tool_use", "id": "tu_01JZ0000000000000000000002", "name": "launch", "input": {}})
        or m
    ),
    "tool-use-bad-input": lambda m: (
        m["content"].append(
            {"type": "tool_use", "id": "tu_01JZ0000000000000000000003", "name": "read_file", "input": {"limit": "x"}}
        )
        or m
    ),
    "tool-use-input-list": lambda m: (
        m["content"].append(
            {"type": "tool_use", "id": "tu_01JZ0000000000000000000004", "name": "read_file", "input": []}
        )
        or m
    ),
    "tool-result-added": lambda m: (
        m["content"].append({"type": "tool_result", "tool_use_id": "tu_01JZ0000000000000000000005", "content": []}) or m
    ),
    "tool-result-error-false": lambda m: (
        m["content"].append(
            {"type": "tool_result", "tool_use_id": "tu_01JZ0000000000000000000005", "content": [], "is_error": False}
        )
        or m
    ),
    "tool-use-bigint-input": lambda m: (
        m["content"].append(
            {
                "type": "tool_use",
                "id": "tu_01JZ0000000000000000000006",
                "name": "read_file",
                "input": {"path": "a", "limit": 10**30, "n": [[[1]]]},
            }
        )
        or m
    ),
    "tool-use-deep-input": lambda m: (
        m["content"].append(
            {
                "type": "tool_use",
                "id": "tu_01JZ0000000000000000000007",
                "name": "read_file",
                "input": {"path": "a", "deep": json.loads("[" * 260 + "]" * 260)},
            }
        )
        or m
    ),
    # blocks inside a tool result: the block rules and the depth check run there too
    "inner-image-bad-media": lambda m: _inner(
        m, {"type": "image", "source": {"kind": "base64", "data": "AAAA"}, "media_type": "png"}
    ),
    "inner-image-bad-base64": lambda m: _inner(
        m, {"type": "image", "source": {"kind": "base64", "data": "A"}, "media_type": "image/png"}
    ),
    "inner-image-ok": lambda m: _inner(
        m, {"type": "image", "source": {"kind": "base64", "data": "AAAA"}, "media_type": "image/png"}
    ),
    "inner-tool-use-deep": lambda m: _inner(
        m,
        {
            "type": "tool_use",
            "id": "tu_01JZ0000000000000000000008",
            "name": "read_file",
            "input": {"deep": json.loads("[" * 260 + "]" * 260)},
        },
    ),
    "inner-tool-use-bad-id": lambda m: _inner(
        m, {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a"}}
    ),
    "to-tool-definition": lambda m: SYNTH_TOOLS[0],
    "to-list": lambda m: [m],
    "to-string": lambda m: "message",
    "to-null": lambda m: None,
}


def _bytes_mutations(line: bytes, r: random.Random) -> dict[str, bytes]:
    """Byte-level mutations of one compact line (without its newline)."""
    doc = json.loads(line)
    first_key = next(iter(doc))
    spaced = json.dumps(doc, ensure_ascii=False).encode()
    return {
        "dup-top-key": line.replace(b"{", b'{"' + first_key.encode() + b'":"dup",', 1),
        "dup-id-last": line[:-1] + b',"id":"01JZ0000000000000000000000"}',
        "dup-meta-key": line.replace(b'"metadata":{', b'"metadata":{"model":null,', 1),
        "dup-input-key": line.replace(b'"input":{', b'"input":{"path":"x",', 1) if b'"input":{' in line else line,
        "spaces": spaced,
        "pretty-colon-in-text": line.replace(b'"text":"', b'"text":"a:b: ', 1),
        "escaped-colon": line.replace(b'"text":"', b'"text":"\\u003a', 1),
        "escaped-colon-dup": line.replace(
            b"{", b'{"' + first_key.encode() + b'\\u003a":1,"' + first_key.encode() + b'":"d",', 1
        ),
        # an escaped colon in a key re-encodes as a colon and hides a lost duplicate from
        # a bare colon count
        "escaped-colon-hides-dup": line.replace(b'"input":{', b'"input":{"a\\u003ab":1,"k":1,"k":2,', 1)
        if b'"input":{' in line
        else line.replace(b'"metadata":{', b'"metadata":{"provider_raw":{"a\\u003ab":1,"k":1,"k":2},', 1),
        "unicode-escape": line.replace("ü".encode(), b"\\u00fc")
        if "ü".encode() in line
        else line.replace(b'"text":"', b'"text":"\\u00e9', 1),
        "slash-escape": line.replace(b'"text":"', b'"text":"\\/', 1),
        "lone-surrogate": line.replace(b'"text":"', b'"text":"\\ud800', 1),
        "reordered": orjson.dumps(dict(reversed(list(doc.items())))),
        "trailing-space": line + b" ",
        "two-values": line + b" {}",
        "truncated": line[: len(line) // 2],
        "invalid-utf8": line.replace(b'"text":"', b'"text":"\xff', 1),
        "invalid-utf8-last-text": _replace_last(line, b'"text":"', b'"text":"ok \xe2\x82'),
        "surrogate-utf8": line.replace(b'"text":"', b'"text":"\xed\xa0\x80', 1),
        "overlong-utf8": line.replace(b'"text":"', b'"text":"\xc0\xaf', 1),
        "invalid-utf8-model": line.replace(b'"model":"', b'"model":"\xff', 1),
        "text-raw-number": line.replace(b'"text":"', b'"text":12,"t":"', 1),
        "text-raw-tab": line.replace(b'"text":"', b'"text":"\t', 1),
        "text-escaped-quote": line.replace(b'"text":"', b'"text":"\\"', 1),
        "nan": line.replace(b'"schema_version":1', b'"schema_version":NaN', 1),
        "infinity-input": line.replace(b'"input":{', b'"input":{"x":Infinity,', 1) if b'"input":{' in line else line,
        "trailing-comma": line[:-1] + b",}",
        "crlf": line + b"\r",
        "blank-before": b"\n" + line,
        "spaces-line": b"   \n" + line,
        "deep-array": b"[" * (r.choice((150, 250, 300))) + b"]" * 0 + line,
    }


def _replace_last(line: bytes, old: bytes, new: bytes) -> bytes:
    at = line.rfind(old)
    return line if at < 0 else line[:at] + new + line[at + len(old) :]


def broken_corpus(n: int, seed: int, *, rate: float = 0.15, deep: bool = True) -> list[bytes]:
    """`n` synthetic messages (with their sessions, tool calls and costs), a share of
    the lines broken by one mutation each, and some lines swapped or repeated (session
    rules: ids out of order, repeated ids, unpaired or duplicate tool results)."""
    r = random.Random(seed)
    docs = list(messages(n, seed=seed, session_len=12))
    lines: list[bytes] = []
    sem = sorted(SEMANTIC)
    for doc in docs:
        line = _line(doc)
        roll = r.random()
        if roll < rate / 2:
            name = r.choice(sem)
            lines.append(_line(SEMANTIC[name](copy.deepcopy(doc))))
        elif roll < rate:
            muts = _bytes_mutations(line, r)
            if not deep:
                muts.pop("deep-array")
            lines.append(muts[r.choice(sorted(muts))])
        elif roll < rate + 0.02 and lines:
            lines.append(lines[-1])  # a repeated line: TS202, TS207, TS206 ...
        elif roll < rate + 0.04 and lines:
            lines.insert(len(lines) - 1, line)  # swapped with the previous one: TS203, TS205 ...
        else:
            lines.append(line)
    return lines


def _write(
    tmp: Path, lines: list[bytes], *, name: str = "c.jsonl", bom: bool = False, final_newline: bool = True
) -> Path:
    p = tmp / name
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    p.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return p


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("sides")
    (d / "tools.json").write_text(json.dumps(SYNTH_TOOLS))
    (d / "pricing.yaml").write_text(PRICING_YAML)
    return {"tools": d / "tools.json", "pricing": d / "pricing.yaml"}


SELECTIONS = [
    Selection(),
    Selection(select=("TS0",)),
    Selection(select=("TS1",)),
    Selection(select=("TS2",)),
    Selection(ignore=("TS2",)),
    Selection(ignore=("TS202", "TS207")),
    Selection(ignore=("TS117", "TS115", "TS201", "TS108")),
    Selection(strict=True),
    Selection(select=("TS020", "TS203"), strict=True),
]


@pytest.mark.parametrize("sel", SELECTIONS, ids=lambda s: f"{s.select}-{s.ignore}-{s.strict}")
def test_broken_corpus_same_under_every_selection(tmp_path: Path, sel: Selection, sides: dict[str, Path]) -> None:
    p = _write(tmp_path, broken_corpus(1500, seed=13))
    cleared = same(p, selection=sel)
    assert cleared > 900  # the fast path did the work: most lines are intact
    same(p, selection=sel, tools=sides["tools"], pricing=sides["pricing"])


@pytest.mark.parametrize("rev", [(), ("v2",)])
def test_broken_corpus_same_with_tools_pricing_revisions(
    tmp_path: Path, rev: tuple[str, ...], sides: dict[str, Path]
) -> None:
    p = _write(tmp_path, broken_corpus(1500, seed=29, rate=0.3))
    assert same(p, revisions=rev, tools=sides["tools"], pricing=sides["pricing"]) > 600
    assert same(p, revisions=rev, tools=TOOLS, pricing=PRICING) > 0  # other tables: TS304, TS402, TS403 ...


def test_framing_bom_no_final_newline_and_long_lines(tmp_path: Path) -> None:
    lines = broken_corpus(600, seed=5, rate=0.05)
    p = _write(tmp_path, lines, bom=True, final_newline=False)
    assert same(p) > 400
    longest = max(map(len, lines))
    for limit in (longest - 1, 900, 1500, longest):  # lines longer than the limit: TS008, skipped
        same(p, max_line_bytes=limit)
    crlf = _write(tmp_path, [x + b"\r" for x in lines[:50]] + lines[50:], name="crlf.jsonl")
    same(crlf)


def test_valid_corpus_is_cleared_whole(tmp_path: Path, sides: dict[str, Path]) -> None:
    """The bench corpus: every message takes the fast path, tools and pricing included."""
    p = _write(tmp_path, [_line(m) for m in messages(2000, seed=2026)])
    assert same(p) == 2000
    assert same(p, tools=sides["tools"], pricing=sides["pricing"]) == 2000
    assert same(p, selection=Selection(select=("TS0",))) == 2000


@pytest.mark.parametrize("fixture", sorted(RULES.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_rule_fixture_same(fixture: Path) -> None:
    same(fixture)
    same(fixture, tools=TOOLS, pricing=PRICING)
    same(fixture, selection=Selection(strict=True), revisions=("v2",))


@pytest.mark.parametrize("depth", [199, 254, 255, 256, 300, 600, 1000, 1024, 1500])
@pytest.mark.parametrize("compact", [True, False])
def test_deep_lines_never_crash_and_match(tmp_path: Path, depth: int, compact: bool) -> None:
    """The nesting crash of issue 13 (exit 3 in the duplicate-key proof) stays fixed on
    both paths: a deep line is a located TS008 or valid, never an exception. Compact
    lines reach the batch proof, spaced ones the line-by-line one."""
    base = (RULES / "valid.jsonl").read_text().splitlines()
    deep = '{"a":' * depth + "1" + "}" * depth
    if compact:  # provider_raw in its schema place, so the line re-encodes to its own bytes
        doc = json.loads(base[2])
        doc["metadata"]["provider_raw"] = "DEEP"
        base = [orjson.dumps(json.loads(x)).decode() for x in base]
        base[2] = orjson.dumps(doc).decode().replace('"DEEP"', deep)
    else:
        base[2] = base[2].replace('"metadata": {', '"metadata": {"provider_raw": ' + deep + ", ", 1)
    p = _write(tmp_path, [x.encode() for x in base])
    same(p)
    same(_write(tmp_path, [x.encode() for x in [*base, "[" * depth + "]" * depth]], name="arrays.jsonl"))
    found = [(f.rule, f.line) for f in validate([p]).findings]
    if depth >= 255:  # deeper than orjson writes: TS008 from jiter, located (was exit 3)
        assert ("TS008", 3) in found
    elif depth < 200:  # shallower than every parser's limit: valid
        assert not [f for f in found if f[1] == 3]


def test_one_broken_line_in_an_intact_block(tmp_path: Path) -> None:
    """Each byte-level and semantic mutation alone among intact lines, so the batch proof
    (decode, re-encode, compare) is what must catch it."""
    docs = list(messages(120, seed=41))
    lines = [_line(d) for d in docs]
    r = random.Random(3)
    target = 60
    kinds = {f"b:{k}": (target, v) for k, v in _bytes_mutations(lines[target], r).items()}
    for role in ("user", "assistant", "tool", "system"):  # each semantic mutation on each role
        at = next(i for i, d in enumerate(docs) if d["role"] == role and (i > 40 or role == "system"))
        kinds.update({f"s:{role}:{k}": (at, _line(fn(copy.deepcopy(docs[at])))) for k, fn in SEMANTIC.items()})
    for name, (at, bad) in sorted(kinds.items()):
        p = _write(tmp_path, [*lines[:at], bad, *lines[at + 1 :]], name=name.replace(":", "_") + ".jsonl")
        assert same(p) >= 100, name


def _session_edit(kind: str, docs: list[dict[str, Any]], i: int, r: random.Random) -> None:
    """One edit of a valid corpus that only the session rules can see (each line stays
    valid alone), at message `i`."""
    d = docs[i]
    if kind == "repeat":  # TS202, and TS207/TS206 when it has tool blocks
        docs.insert(i + 1, copy.deepcopy(d))
    elif kind == "swap":  # TS203/TS204, or TS205 when a result moves before its call
        docs[i], docs[i + 1] = docs[i + 1], docs[i]
    elif kind == "drop":  # TS205 (a result without its call) or TS208 (a call never answered)
        del docs[i]
    elif kind == "back-in-time":  # TS204 alone: the id still increases
        d["created_at"] = "2026-01-01T00:00:00.000000Z"
    elif kind == "id-from-another-session":  # TS202 alone: the last id of a session is the next one's first
        j = next(k for k in range(i, len(docs)) if docs[k + 1]["session_id"] != docs[k]["session_id"])
        docs[j]["id"] = docs[j + 1]["id"]
    elif kind == "interleave":  # two sessions in alternating lines: still valid, not one run each
        a = d["session_id"]
        j = next((k for k in range(i, len(docs)) if docs[k]["session_id"] != a), len(docs))
        k2 = next((k for k in range(j, len(docs)) if docs[k]["session_id"] != docs[j]["session_id"]), len(docs))
        first, second = docs[i:j], docs[j:k2]
        merged = [x for pair in zip(first, second, strict=False) for x in pair]
        merged += first[len(second) :] + second[len(first) :]
        docs[i:k2] = merged
    elif kind == "interleave-swap":  # as above, then two messages of one session swapped (TS203)
        _session_edit("interleave", docs, i, r)
        if docs[i + 2]["session_id"] == docs[i]["session_id"]:
            docs[i], docs[i + 2] = docs[i + 2], docs[i]
    elif kind == "partial-unanswered":  # no TS208: a partial message's calls need no answer (§5.1.5)
        at = next((k for k in range(i, len(docs)) if any(b["type"] == "tool_use" for b in docs[k]["content"])), None)
        if at is not None:
            docs[at]["metadata"]["status"] = "partial"
            uses = {b["id"] for b in docs[at]["content"] if b["type"] == "tool_use"}
            docs[at + 1 :] = [d for d in docs[at + 1 :] if not any(b.get("tool_use_id") in uses for b in d["content"])]
    elif kind == "result-in-next-session":  # TS205: a new session's first message answers the last one's call
        at = next((k for k in range(i, len(docs)) if docs[k]["role"] == "tool"), None)
        if at is not None:
            sid = docs[at]["session_id"]
            for k in range(at, len(docs)):
                if docs[k]["session_id"] != sid:
                    break
                docs[k]["session_id"] = f"sess_moved_{at}"
    elif kind == "result-twice":  # TS206: the tool message again, as a new message
        at = next((k for k in range(i, len(docs)) if docs[k]["role"] == "tool"), None)
        if at is not None:
            again = copy.deepcopy(docs[at])
            again["id"] = docs[at]["id"][:-1] + ("Z" if docs[at]["id"][-1] != "Z" else "Y")
            docs.insert(at + 1, again)
    elif kind in ("cancel-resumed", "cancel-then-user"):
        # streaming §6.3: TS209 when the session's next assistant message comes before its
        # next user message (a tool loop going on after the cancel), none when a user
        # message comes first: the first assistant message from `i` on that has such a next
        for k in range(i, len(docs) - 1):
            sid = docs[k]["session_id"]
            if docs[k]["role"] != "assistant":
                continue
            if docs[k]["metadata"].get("status") == "cancelled":
                continue  # an earlier edit's
            nxt = next(
                (m for m in docs[k + 1 :] if m["session_id"] == sid and m["role"] in ("user", "assistant")), None
            )
            if nxt is not None and (nxt["role"] == "assistant") == (kind == "cancel-resumed"):
                docs[k]["metadata"]["status"] = "cancelled"
                break


SESSION_EDITS = (
    "repeat", "swap", "drop", "back-in-time", "id-from-another-session", "interleave", "interleave-swap",
    "result-twice", "partial-unanswered", "result-in-next-session", "cancel-resumed", "cancel-then-user",
)  # fmt: skip


@pytest.mark.parametrize("kind", SESSION_EDITS)
@pytest.mark.parametrize("count", [1, 6])
@pytest.mark.parametrize("block", [None, 2500])
def test_session_rules_across_batches(
    tmp_path: Path, kind: str, count: int, block: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines valid alone, so whole blocks reach the column-wise session step (`_bulk`):
    its report, and that of `--jobs` through the `Batch` codec, equal the exact path's,
    wherever in a block the session rules fire (small blocks put many edits on a block's
    first line, where the batch meets the run state), and it still clears the rest."""
    if block is not None:
        monkeypatch.setattr(fast_blocks, "BLOCK_BYTES", block)
    r = random.Random(SESSION_EDITS.index(kind) * 10 + count)
    docs = list(messages(900, seed=count, session_len=15))
    for _ in range(count):
        _session_edit(kind, docs, r.randrange(5, len(docs) - 40), r)
    p = _write(tmp_path, [_line(d) for d in docs])
    assert same(p) >= len(docs) - 4 * count
    assert same(p, selection=Selection(ignore=("TS202",))) >= len(docs) - 4 * count
    seq = dumps(validate([p]).as_dict())
    assert dumps(validate([p], jobs=2, chunk_bytes=40_000).as_dict()) == seq
    if kind.startswith("cancel-"):  # the edits did what they say (the comparison above is not vacuous)
        resumed = sum(f.rule == "TS209" for f in validate([p]).findings)
        assert resumed == (count if kind == "cancel-resumed" else 0)


def test_interleaved_sessions_commit_in_bulk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions written at once interleave line by line in a store (the bench's agents
    corpus): their batches still commit whole (`_bulk`), none message by message, and
    the report is the exact path's."""
    docs = list(agent_messages(1500, seed=3))
    assert len({d["session_id"] for d in docs[:200]}) > 4  # several sessions at once
    p = _write(tmp_path, [_line(d) for d in docs])
    one_by_one = 0
    real = FastPath.session

    def counted(self: FastPath, path: str, item: Any) -> bool:
        nonlocal one_by_one
        one_by_one += 1
        return real(self, path, item)

    monkeypatch.setattr(FastPath, "session", counted)
    assert same(p) == len(docs)
    assert one_by_one == 0


@pytest.mark.parametrize("kind", SESSION_EDITS)
@pytest.mark.parametrize("block", [None, 2500])
def test_session_rules_across_interleaved_sessions(
    tmp_path: Path, kind: str, block: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session edits of `test_session_rules_across_batches` on interleaved sessions:
    a session's first message of a batch meets its last one before (TS203, TS204), its
    later ones meet it within the batch (`order`), and the reports stay the exact path's,
    `--jobs` included."""
    if block is not None:
        monkeypatch.setattr(fast_blocks, "BLOCK_BYTES", block)
    r = random.Random(SESSION_EDITS.index(kind))
    docs = list(agent_messages(900, seed=SESSION_EDITS.index(kind)))
    for _ in range(4):
        _session_edit(kind, docs, r.randrange(5, len(docs) - 40), r)
    p = _write(tmp_path, [_line(d) for d in docs])
    assert same(p) >= len(docs) - 40
    same(p, selection=Selection(ignore=("TS202",)))
    seq = dumps(validate([p]).as_dict())
    assert dumps(validate([p], jobs=2, chunk_bytes=40_000).as_dict()) == seq


@pytest.mark.parametrize("edit", ["use-then-result", "result-then-use", "use-twice", "result-twice"])
def test_tool_ids_repeated_within_one_message(tmp_path: Path, edit: str) -> None:
    """A tool id twice in one message: the tool rules meet its blocks in order (the exact
    session phase commits each block before the next), so a call and its result in one
    message pair, and a second call or result with the id does not. With TS102 ignored
    such a message may still be cleared, so the batch step is what must get it right."""
    docs = list(messages(400, seed=17, session_len=15))
    r = random.Random(edit)
    for k in r.sample(range(10, 390), 6):
        d = docs[k]
        if d["role"] != "assistant":
            continue
        tid = f"tu_01JZ00000000000000000{k:05d}"
        use = {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": "a"}}
        result = {"type": "tool_result", "tool_use_id": tid, "content": []}
        d["content"] += {
            "use-then-result": [use, result],
            "result-then-use": [result, use],
            "use-twice": [use, use],
            "result-twice": [use, result, result],
        }[edit]
    p = _write(tmp_path, [_line(d) for d in docs])
    for sel in (Selection(ignore=("TS102",)), Selection()):
        same(p, selection=sel)
        seq = dumps(validate([p], Options(selection=sel)).as_dict())
        assert dumps(validate([p], Options(selection=sel), jobs=2, chunk_bytes=40_000).as_dict()) == seq


@pytest.mark.parametrize("rate", [0.003, 0.03, 0.3])
def test_blocks_located_in_pieces(tmp_path: Path, rate: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A block the batch proof fails on is located in pieces (`PIECE_BYTES`), and the
    blocks after it are read that small for a while: lines of every length (a line
    longer than a piece among them) keep their numbers, and the reports stay the exact
    path's, sequential and with --jobs."""
    monkeypatch.setattr(fast_blocks, "BLOCK_BYTES", 24_000)
    monkeypatch.setattr(fast_blocks, "PIECE_BYTES", 3_000)
    lines = broken_corpus(700, seed=int(rate * 1000), rate=rate, deep=False)
    long_doc = copy.deepcopy(next(m for m in messages(3, seed=5) if m["role"] == "user"))
    long_doc["content"][0]["text"] = "x" * 5000  # longer than a piece
    lines[300:300] = [_line(long_doc), b"{", _line(long_doc)]
    p = _write(tmp_path, lines)
    assert same(p) > 300
    seq = dumps(validate([p]).as_dict())
    assert dumps(validate([p], jobs=2, chunk_bytes=50_000).as_dict()) == seq


def test_pieces_cut_at_line_ends() -> None:
    block = b"".join(b"x" * n + b"\n" for n in (1, 5, 9, 2, 0, 30, 3))
    for size in (1, 2, 5, 7, 10, 11, 40, 100):
        pieces = list(fast_module._pieces(block, size))
        assert b"".join(pieces) == block
        for piece in pieces:
            assert piece.endswith(b"\n")
            assert len(piece) <= size or piece.count(b"\n") == 1  # only a line longer than `size` alone


def _rewrite(line: bytes, style: str) -> bytes:
    """`line` as another JSON writer would put it (a line that is not JSON stays)."""
    try:
        doc = json.loads(line)
    except ValueError:
        return line
    if style == "spaced":  # Python's json.dumps defaults
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if style == "ascii":  # compact, but every non-ASCII character escaped
        return json.dumps(doc, separators=(",", ":")).encode()
    if style == "reordered":  # keys in another order than the schema's, at every level
        return json.dumps(_reverse_keys(doc), separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    assert style == "crlf"
    return line + b"\r"


def _reverse_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _reverse_keys(v[k]) for k in reversed(list(v))}
    if isinstance(v, list):
        return [_reverse_keys(x) for x in v]
    return v


@pytest.mark.parametrize("style", ["spaced", "ascii", "reordered", "crlf"])
def test_json_written_by_other_tools(tmp_path: Path, style: str) -> None:
    """Whole files whose bytes are not msgspec's encoding (spaces, escapes, another key
    order, CRLF): every block fails the byte proof, and each line is proven alone
    (`_mixed`). The fast path still clears the intact lines, reports what the exact path
    reports, and `--jobs` reports the same."""
    lines = [_rewrite(x, style) for x in broken_corpus(600, seed=71, rate=0.1, deep=False)]
    p = _write(tmp_path, lines)
    assert same(p) > 450
    assert same(p, selection=Selection(select=("TS0",))) > 450  # a lean run
    seq = dumps(validate([p]).as_dict())
    assert dumps(validate([p], jobs=2, chunk_bytes=30_000).as_dict()) == seq


def test_runs_of_lines_that_cannot_be_cleared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stretch where every line carries a finding (an unknown metadata field) sends
    blocks straight to the exact path after a few tries; the clean stretch after it is
    cleared again (a probe block finds it), and the report is the exact path's, with a
    bare CR inside a line, a CRLF, a blank line and session edits in the cold stretch."""
    docs = list(messages(3000, seed=5, session_len=20))
    lines = [_line(d) for d in docs]
    for k in range(200, 1400):
        d = copy.deepcopy(docs[k])
        d["metadata"]["trace_id"] = "t"  # TS010 on every line of the stretch
        lines[k] = _line(d)
    lines[700] = lines[700].replace(b'"text":"', b'"text":"a\rb', 1)  # a raw CR: TS001, not a line break
    lines[900], lines[901] = lines[901], lines[900]  # TS203/TS204 in the cold stretch
    lines[800] += b"\r"  # the file's first CRLF, and a blank line: framing findings
    lines.insert(1000, b"")
    p = _write(tmp_path, lines)
    tried: list[int] = []
    exact_lines = FastPath._exact_lines

    def spy(self: FastPath, framing: Any, first: int, block: bytes) -> Any:
        tried.append(first)
        return exact_lines(self, framing, first, block)

    monkeypatch.setattr(FastPath, "_exact_lines", spy)
    cleared = same(p)
    # cold only inside the stretch, and until a probe block (every 8th, ~66 lines each) after it
    assert tried and min(tried) > 200 and max(tried) < 1400 + 8 * 70
    assert cleared >= 3000 - 1200 - 8 * 70  # the clean lines after it are cleared again
    seq = dumps(validate([p]).as_dict())
    assert dumps(validate([p], jobs=2, chunk_bytes=100_000).as_dict()) == seq


# -- hypothesis: strategies from the schemas, fast == exact == oracle -------------------


def _compact(doc: Any) -> bytes:
    try:
        return dumps(doc)
    except Exception:  # a value the writer cannot take (none expected): leave it out
        return b"{}"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(documents().map(_compact), invalid_documents().map(lambda i: _compact(i.document))),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(SELECTIONS),
)
def test_hypothesis_fast_exact_oracle(tmp_path: Path, lines: list[bytes], sel: Selection) -> None:
    p = tmp_path / "h.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    same(p, selection=sel)
    # the oracle: a line carries the exact path's TS020 exactly when python-jsonschema rejects it
    exact, _, _ = _run(p, Options(exact=True))
    ts020 = {f[1] for f in exact if f[3] == "TS020"}
    for i, line in enumerate(lines, 1):
        doc = json.loads(line)
        if (
            isinstance(doc, dict)
            and doc.get("schema_version") not in (None, 1)
            and type(doc.get("schema_version")) is int
        ):
            continue  # TS012: another major version, not schema-checked
        if isinstance(doc, dict) and "input_schema" in doc and "role" not in doc:
            continue  # a tool definition
        assert (i in ts020) == (not ORACLE.oracle_is_valid(doc)), (i, line[:300])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, 10_000), st.floats(0.0, 0.6), st.sampled_from(SELECTIONS))
def test_hypothesis_broken_corpora(tmp_path: Path, seed: int, rate: float, sel: Selection) -> None:
    p = tmp_path / "b.jsonl"
    p.write_bytes(b"\n".join(broken_corpus(80, seed=seed, rate=rate, deep=False)) + b"\n")
    same(p, selection=sel)


# -- the fast model follows the schemas ------------------------------------------------


def _structs(t: Any, seen: dict[str, Any]) -> None:
    import typing

    for arg in typing.get_args(t):
        _structs(arg, seen)
    if isinstance(t, type) and issubclass(t, msgspec.Struct) and t.__name__ not in seen:
        seen[t.__name__] = t
        for hint in typing.get_type_hints(t, include_extras=True).values():
            _structs(hint, seen)


@pytest.mark.parametrize("rev", ["v1", "v2"])
def test_fast_model_follows_the_schema_files(rev: str) -> None:
    """Every object of the schemas a message reaches is a Struct with the schema's fields,
    in the schema's order, required exactly where the schema requires them, closed, and
    tagged by its `type` const; every known block is a branch of the content union."""
    s = schema_set("canonical", rev)
    seen: dict[str, Any] = {}
    _structs(FM.message_model(rev).message, seen)
    by_title = {str(doc.get("title")): doc for doc in s.documents.values() if doc.get("type") == "object"}
    expected = {"Message", "MessageMetadata", "Usage", "RoutingDecisionRecord", "ImageSource"}
    expected |= {str(s[f]["title"]) for f in s["known-content-block.json"]["discriminator"]["mapping"].values()}
    assert {name.removeprefix("Fast") for name in seen} == expected
    for name, cls in seen.items():
        schema = by_title[name.removeprefix("Fast")]
        props = [k for k in schema["properties"] if not (k == "type" and "const" in schema["properties"][k])]
        assert list(cls.__struct_fields__) == props, name
        required = set(schema.get("required", ())) - {"type"}
        assert {f.name for f in msgspec.structs.fields(cls) if f.required} == required, name
        assert cls.__struct_config__.forbid_unknown_fields
        if "type" in schema["properties"] and "const" in schema["properties"]["type"]:
            assert cls.__struct_config__.tag == schema["properties"]["type"]["const"]


@pytest.mark.parametrize("rev", ["v1", "v2"])
def test_fast_model_required_fields(rev: str) -> None:
    """A valid message missing any one required field does not decode (it goes exact)."""
    dec = msgspec.json.Decoder(FM.message_model(rev).message)
    msg = next(m for m in messages(20, seed=3) if m["role"] == "assistant")
    for key in schema_set("canonical", rev)["message.json"]["required"]:
        broken = {k: v for k, v in msg.items() if k != key}
        with pytest.raises(msgspec.ValidationError):
            dec.decode(orjson.dumps(broken))
    for key in schema_set("canonical", rev)["usage.json"]["required"]:
        broken = copy.deepcopy(msg)
        del broken["metadata"]["usage"][key]
        with pytest.raises(msgspec.ValidationError):
            dec.decode(orjson.dumps(broken))
    dec.decode(orjson.dumps(msg))


@pytest.mark.parametrize("rev", ["v1", "v2"])
def test_raw_model_decodes_exactly_the_opaque_strings_as_raw(rev: str) -> None:
    """The raw model differs from the strict one only in the opaque fields, each a
    required plain string of the schema, now `msgspec.Raw`."""
    raw = FM.raw_model(rev, fast_module.OPAQUE)
    assert raw is not None
    got = {f"{cls.__name__.removeprefix('Fast')}.{f}" for cls, names in raw.raw for f in names}
    assert got == set(fast_module.OPAQUE)
    strict: dict[str, Any] = {}
    loose: dict[str, Any] = {}
    _structs(FM.message_model(rev).message, strict)
    _structs(raw.model.message, loose)
    assert strict.keys() == loose.keys()
    import typing

    for name, cls in loose.items():
        for f, t in typing.get_type_hints(cls).items():
            want = typing.get_type_hints(strict[name])[f]
            if f"{name.removeprefix('Fast')}.{f}" in fast_module.OPAQUE:
                assert (want, t) == (str, msgspec.Raw)
            elif t is not want:
                assert str(t) == str(want), (name, f)  # the same type, built again


def _fake_set(changes: dict[str, Any]) -> Any:
    s = schema_set("canonical", "v1")
    return type(s)(s.format, s.version, s.folder, {**s.documents, **changes})


def test_raw_model_refuses_a_raw_field_where_the_check_does_not_look() -> None:
    """A text block reached outside `content` (here a metadata field) would hold a raw
    value `OpaqueCheck` never sees: no raw model then, the strict one serves."""
    s = schema_set("canonical", "v1")
    meta = copy.deepcopy(s["message-metadata.json"])
    meta["properties"]["note"] = {"$ref": "text-block.json"}
    assert FM._raw(FM._Builder(_fake_set({"message-metadata.json": meta}), fast_module.OPAQUE)) is None
    meta["properties"]["note"] = {"type": "array", "items": {"$ref": "text-block.json"}}
    assert FM._raw(FM._Builder(_fake_set({"message-metadata.json": meta}), fast_module.OPAQUE)) is None
    meta["properties"]["note"] = {"type": "array", "items": {"$ref": "tool-result-block.json"}}  # text blocks deeper in
    assert FM._raw(FM._Builder(_fake_set({"message-metadata.json": meta}), fast_module.OPAQUE)) is None
    assert FM._raw(FM._Builder(_fake_set({}), fast_module.OPAQUE)) is not None


def test_raw_model_keeps_a_constrained_string_strict() -> None:
    """An opaque field the schema constrains (a pattern, a length) stays a checked str."""
    s = schema_set("canonical", "v1")
    text = copy.deepcopy(s["text-block.json"])
    text["properties"]["text"]["maxLength"] = 10
    raw = FM._raw(FM._Builder(_fake_set({"text-block.json": text}), fast_module.OPAQUE))
    assert raw is not None
    assert "FastTextBlock" not in {cls.__name__ for cls, _ in raw.raw}
    text = copy.deepcopy(s["text-block.json"])
    text["required"] = ["type"]  # optional: an absent value would not be a raw one
    raw = FM._raw(FM._Builder(_fake_set({"text-block.json": text}), fast_module.OPAQUE))
    assert raw is not None
    assert "FastTextBlock" not in {cls.__name__ for cls, _ in raw.raw}


def _opaque_values(doc: Any, fill: Callable[[str], str]) -> Any:
    """`doc` with every value of an opaque field (`fast.OPAQUE`) replaced by `fill(value)`."""
    fields = {tuple(x.split(".")) for x in fast_module.OPAQUE}
    titles = {"text": "TextBlock", "thinking": "ThinkingBlock", "redacted_thinking": "RedactedThinkingBlock"}
    if isinstance(doc, list):
        return [_opaque_values(x, fill) for x in doc]
    if not isinstance(doc, dict):
        return doc
    out = {k: _opaque_values(v, fill) for k, v in doc.items()}
    title = titles.get(str(doc.get("type")))
    for k, v in doc.items():
        if (title, k) in fields and isinstance(v, str):
            out[k] = fill(v)
    return out


@pytest.mark.parametrize("fill", ["", "x", " \u00fc\n:{", "long"])
def test_no_rule_reads_an_opaque_string(tmp_path: Path, fill: str) -> None:
    """The claim behind `fast.OPAQUE`: the exact path's findings do not depend on the
    values of those fields, only on their being strings. Every rule fixture and a
    synthetic corpus, with every opaque value replaced, report exactly as before."""
    value = "w" * 5000 if fill == "long" else fill
    files = [*sorted(RULES.glob("*.jsonl")), _write(tmp_path, broken_corpus(300, seed=8, rate=0.3))]
    for k, src in enumerate(files):
        lines = src.read_bytes().split(b"\n")
        out = []
        for line in lines:
            try:
                doc = orjson.loads(line)  # strict: a line with bad UTF-8 or a lone surrogate stays as it was
            except ValueError:
                out.append(line)
                continue
            out.append(_line(_opaque_values(doc, lambda _v: value)))
        assert out != lines or value == "x", src.name  # the replacement reached the data
        (tmp_path / "changed").mkdir(exist_ok=True)
        (tmp_path / "same").mkdir(exist_ok=True)
        changed = tmp_path / "changed" / f"{k}.jsonl"  # the same name: findings may quote it
        changed.write_bytes(b"\n".join(out))
        copy_ = tmp_path / "same" / f"{k}.jsonl"
        copy_.write_bytes(b"\n".join(_line(orjson.loads(x)) if _parses(x) else x for x in lines))
        for kw in ({}, {"tools": TOOLS, "pricing": PRICING}):
            a, _, _ = _run(copy_, Options(exact=True, **kw))  # type: ignore[arg-type]
            b, _, _ = _run(changed, Options(exact=True, **kw))  # type: ignore[arg-type]
            assert [(*x[1:5], x[5].replace("/changed/", "/same/")) for x in b] == [x[1:] for x in a], src.name


def _parses(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except ValueError:
        return False
    return True


def test_a_keyword_the_generator_does_not_know_fails_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    s = schema_set("canonical", "v1")
    usage = copy.deepcopy(s["usage.json"])
    usage["properties"]["latency_ms"]["multipleOf"] = 5
    docs = {**s.documents, "usage.json": usage}
    fake = type(s)(s.format, s.version, s.folder, docs)
    builder = FM._Builder(fake)
    with pytest.raises(ValueError, match="multipleOf"):
        builder.type_of(fake["message.json"], "message.json", "message.json#", ())


def test_a_schema_change_changes_the_model() -> None:
    """The model is the schema's: a new metadata property appears as a field, in order."""
    s = schema_set("canonical", "v1")
    meta = copy.deepcopy(s["message-metadata.json"])
    meta["properties"]["region"] = {"type": "string", "pattern": "^[a-z]+(?![\\s\\S])"}
    fake = type(s)(s.format, s.version, s.folder, {**s.documents, "message-metadata.json": meta})
    b = FM._Builder(fake)
    root = b.type_of(fake["message.json"], "message.json", "message.json#", ())
    import typing

    meta_cls = typing.get_type_hints(root)["metadata"]
    assert meta_cls.__struct_fields__[-1] == "region"
    assert (("metadata", "region"), "^[a-z]+(?![\\s\\S])") in [(p, r.pattern) for p, r in b.formats]


@pytest.mark.parametrize("where", ["provider_raw", "tool_use", "tool_result"])
@pytest.mark.parametrize("depth", [150, 300])
def test_lean_runs_still_prove_the_depth_of_open_fields(tmp_path: Path, where: str, depth: int) -> None:
    """A run with no session rule, one-message rule or price table (`--select TS0`) clears
    lines on formats and depth alone (`FastPath.lean`): a deep `provider_raw`, tool input,
    or tool input inside a tool_result still takes the exact path (TS008 there), and the
    report is the exact path's."""
    lines = [json.loads(x) for x in (RULES / "valid.jsonl").read_text().splitlines()]
    deep = '{"a":' * depth + "1" + "}" * depth
    k = {"provider_raw": 2, "tool_use": 2, "tool_result": 3}[where]
    doc = lines[k]
    if where == "provider_raw":
        doc["metadata"]["provider_raw"] = "DEEP"
    elif where == "tool_use":
        doc["content"][-1]["input"] = {"p": "DEEP"}
    else:
        use = {"type": "tool_use", "id": "tu_01JZ0000000000000000000T09", "name": "read_file", "input": {"p": "DEEP"}}
        doc["content"][0]["content"].append(use)
    text = [orjson.dumps(d).decode() for d in lines]  # compact: the lines reach the batch proof
    text[k] = text[k].replace('"DEEP"', deep)
    p = _write(tmp_path, [x.encode() for x in text])
    lean = Selection(select=("TS0",))
    run = CanonicalRun(Options(selection=lean))
    assert run.fast is not None and run.fast.lean
    assert not CanonicalRun(Options()).fast.lean  # type: ignore[union-attr]
    cleared = same(p, selection=lean)
    assert cleared == len(lines) - (depth >= 200)
    found = [(f.rule, f.line) for f in validate([p], Options(selection=lean)).findings]
    assert (("TS008", k + 1) in found) == (depth >= 255)


def _rules_read(fn: object, holder: str = "on") -> set[str]:
    """The ids of the rules whose switch `fn` reads as `on[R.NAME.id]` (or `self.on[...]`)."""
    import ast
    import inspect
    import textwrap

    from conformance.formats.canonical import rules as R

    found: set[str] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(fn)))):  # type: ignore[arg-type]
        if not isinstance(node, ast.Subscript):
            continue
        target, key = node.value, node.slice
        named = (isinstance(target, ast.Name) and target.id == holder) or (
            isinstance(target, ast.Attribute) and target.attr == holder
        )
        if named and not isinstance(key, ast.Name):  # a loop over the declared rules
            # every switch is read by its RuleInfo constant, never by a written id
            assert isinstance(key, ast.Attribute) and key.attr == "id", ast.unparse(node)
            assert isinstance(key.value, ast.Attribute) and ast.unparse(key.value.value) == "R", ast.unparse(node)
            found.add(getattr(R, key.value.attr).id)
    return found


def test_fast_proofs_declared_are_the_predicates_of_the_mirror() -> None:
    """Issue 24: the registrations declare how the fast path proves each rule silent
    (`fast=`), and the fast path derives its sets from them. A rule declared `local` is
    one whose predicate `_local`, `_block_ok` or `_priced` (with `_price_plan`, what it
    looks up once per pricing version and model) evaluates, and every rule they
    evaluate is declared `local` (a lean run skips them all: one missing would go
    unchecked); a rule declared `format` is one whose batch check `FastPath.__init__`
    sets up. The batch filter in front of `_local` reads the selection only to skip work."""
    local = fast_covered("local")
    priced = _rules_read(Mirror._priced) | _rules_read(Mirror._price_plan)
    assert local == _rules_read(Mirror._local) | _rules_read(Mirror._block_ok) | priced
    assert _rules_read(Mirror._columns) <= local
    assert fast_covered("format") == _rules_read(FastPath.__init__) - local
    # every registration declares one proof (the fast path serves default runs)
    assert all(p is not None for fam in FAMILIES for p in fam.proofs.values())
    assert {"decode", "format", "local", "session", "exact"} == {p for fam in FAMILIES for p in fam.proofs.values()}


def test_fast_path_covers_every_registered_rule() -> None:
    """Every rule registered today has its predicate, so the fast path serves default runs;
    a rule registered without one turns the fast path off instead of going unchecked."""
    assert registered_rules() == fast_covered()
    run = CanonicalRun(Options())
    assert run.fast is not None
    from conformance.core.findings import RuleInfo, Severity

    info = RuleInfo("TS199", Severity.ERROR, "§0", "a rule the fast path does not know")
    MESSAGE.register(info)(lambda ctx, m, emit: None)
    try:
        assert not FastPath.covers(CanonicalRun(Options(), revisions=None).driver, "v1")
        assert CanonicalRun(Options(selection=Selection(ignore=("TS199",)))).fast is not None
    finally:
        MESSAGE.rules.pop()


def test_a_role_the_fast_path_does_not_know_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.formats.canonical import rules as R

    run = CanonicalRun(Options())
    assert FastPath.covers(run.driver, "v1")
    monkeypatch.setattr(R, "ALLOWED_BLOCKS", {k: v for k, v in R.ALLOWED_BLOCKS.items() if k != "tool"})
    assert not FastPath.covers(run.driver, "v1")


def test_batch_patterns_refuse_what_could_cross_a_line() -> None:
    assert _batchable("[0-7][0-9A-HJKMNP-TV-Z]{25}")
    assert _batchable(r"[a-z0-9][a-z0-9_.-]*:[^\s]+")
    assert not _batchable("a.b")
    assert not _batchable("[^x]+")
    assert not _batchable(r"\D+")
    assert not _batchable(r"(a)\1")
    assert not _batchable(r"(?=a)a")


def _batch_patterns() -> list[re.Pattern[str]]:
    """Every pattern the fast path checks per batch (the schemas' lifted ones, the rules'
    formats) and a few of other shapes."""
    from conformance.core.schema_validation import ecma_regex
    from conformance.formats.canonical.invariants import CANONICAL_TIME
    from conformance.formats.canonical.tools import SNAKE_NAME

    run = CanonicalRun(Options())
    out = [r for rev in ("v1", "v2") for _, r in FM.message_model(rev).formats]
    out += [run.ctx.re_ulid, run.ctx.re_tool_id, run.ctx.re_model, CANONICAL_TIME, SNAKE_NAME]
    out += [ecma_regex(x) for x in ("^a[-.]b$", "^[a\\]-]{2}x$", "^[+-]{3}$", "^x{0}y$", "^[ab]{2}|c$", "^[a-c]+$")]
    out.append(re.compile("^AB(?![\\s\\S])", re.IGNORECASE))
    return out


PATTERNS = _batch_patterns()
# values near the patterns: their characters, separators, a newline, non-ASCII look-alikes
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZILOUabcxyz_tu:.-+TZ \n\u0660\u00e9\\]"
_NEAR = st.text(_ALPHABET, max_size=32)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(0, len(PATTERNS) - 1), batches=st.lists(st.lists(_NEAR, max_size=12), min_size=1, max_size=4))
def test_batch_patterns_find_what_the_regex_finds(k: int, batches: list[list[str]]) -> None:
    """`BatchPattern.bad` (one call per batch: a byte translation for fixed widths, one
    regex over joined values, distinct values of repeating columns) names exactly the
    values the pattern rejects one by one, batch after batch on one instance."""
    regex = PATTERNS[k]
    bp = BatchPattern(regex)
    one = regex.match if regex.pattern.endswith("\\Z") else regex.search
    for values in batches:
        assert bp.bad(values) == [i for i, v in enumerate(values) if not one(v)]
        valid = [v for v in values if one(v)]
        assert bp.bad(valid) == []
        if bp.fixed is not None and valid:
            assert bp.fixed.all(valid)  # the fast check itself accepts them (not only the fallback)
        assert bp.bad(valid * 3) == []  # repeats: the distinct values


def test_fixed_width_patterns_are_recognised() -> None:
    assert _fixed_classes("[0-7][0-9A-HJKMNP-TV-Z]{25}") is not None
    assert len(_fixed_classes("tu_[0-7][0-9A-HJKMNP-TV-Z]{25}") or []) == 29
    assert len(_fixed_classes("[0-9T:-]{19}\\.[0-9]{6}Z") or []) == 27
    for body in ("[a-z]+", "(a|b)", "[^a]", "\\d{3}", "a.b", "a?", "[a-", "x{2,3}", "\u00e9"):
        assert _fixed_classes(body) is None, body
    ulid = BatchPattern(re.compile("^[0-7][0-9A-HJKMNP-TV-Z]{25}(?![\\s\\S])"))
    assert ulid.fixed is not None
    good = [
        "01JZ0000000000000000000000",
        "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        "00123456789ABCDEFGHJKMNPQR",
        "0STVWXYZ000000000000000000",
    ]
    assert ulid.bad(good) == [] and ulid.fixed.all(good)
    assert ulid.bad(["X" + good[0], *good]) == [0]  # longer by a prefix: the rest would fit
    assert ulid.bad([*good, "81JZ0000000000000000000000"]) == [4]  # first character past 7
    assert ulid.bad(["01JZ000000000000000000000I", *good]) == [0]  # I is not Crockford
    assert ulid.bad(["01JZ" + "0" * 24, "0" * 24]) == [0, 1]  # too long, too short: the total fits
    assert ulid.bad(["01JZ000000000000000000000\u0660"]) == [0]


_DIGITS = st.text("0123456789", min_size=20, max_size=20)


@settings(max_examples=500, deadline=None)
@given(digits=_DIGITS)
def test_a_real_time_of_the_canonical_shape_matches_the_schema_pattern(digits: str) -> None:
    """The proof behind `fast._TIME_SHAPE`: a value of the canonical shape (digits where
    digits go) that Python reads as a real date and time matches the schemas' RFC 3339
    pattern and the canonical encoding, so a batch of them skips both regexes."""
    from datetime import datetime

    from conformance.formats.canonical.invariants import CANONICAL_TIME

    d = digits
    value = f"{d[:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:20]}Z"
    assert fast_module.FixedWidth(fast_module._fixed_classes(fast_module._TIME_SHAPE) or []).all([value])
    schema = next(r for p, r in FM.message_model("v1").formats if p == ("created_at",))
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return
    assert schema.search(value) and CANONICAL_TIME.match(value)


def test_the_time_shape_skips_only_the_pattern_it_proves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shape stands in for the schema's pattern only when that pattern is the known
    RFC 3339 one; for another (a revision that narrows it) the pattern is checked."""
    from conformance.formats.canonical.invariants import CANONICAL_TIME

    fast = CanonicalRun(Options()).fast
    assert fast is not None and fast.time_shape is not None
    schema = next(r for p, r in FM.message_model("v1").formats if p == ("created_at",))
    assert {p.pattern for p in fast.by_real_shape} == {schema.pattern, CANONICAL_TIME.pattern}
    assert {p.pattern for p in fast.by_shape} == {CANONICAL_TIME.pattern}
    monkeypatch.setattr(fast_module, "_RFC3339_UTC", schema.pattern.replace("[0-9]{4}", "20[0-9]{2}"))
    other = CanonicalRun(Options()).fast
    assert other is not None and other.by_real_shape == other.by_shape
