"""The YAML reader: YAML 1.2 values, line numbers, and bad input as located findings."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core.findings import Finding
from conformance.formats.geppetto.yamlio import MAX_DEPTH, Binary, Document, dump, read_yaml

BIG = 1 << 26


def read(text: str | bytes, max_bytes: int = BIG) -> tuple[Document | None, list[Finding]]:
    data = text.encode() if isinstance(text, str) else text
    doc, findings = None, []
    for item in read_yaml("t.yaml", max_bytes=max_bytes, data=data):
        if isinstance(item, Document):
            doc = item
        else:
            findings.append(item)
    return doc, findings


def rules(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]


def test_scalars_resolve_as_yaml_1_2_core_like_go_yaml_v3() -> None:
    doc, findings = read(
        "a: yes\nb: 0o17\nc: 2024-01-01\nd: 012\ne: 0x1F\nf: ~\ng: True\nh: '5'\ni: 1.5e3\nj: on\nk: !!str 7\n"
    )
    assert findings == [] and doc is not None
    assert doc.value == {
        "a": "yes",
        "b": 15,
        "c": "2024-01-01",
        "d": 12,
        "e": 31,
        "f": None,
        "g": True,
        "h": "5",
        "i": 1500.0,
        "j": "on",
        "k": "7",
    }


def test_every_pointer_has_the_line_of_its_key_or_item() -> None:
    doc, _ = read("id: t\nblocks:\n  - kind: user\n    payload:\n      text: hi\n\n  - kind: llm_text\n")
    assert doc is not None
    assert doc.line("/id") == 1
    assert doc.line("/blocks") == 2
    assert doc.line("/blocks/0") == 3
    assert doc.line("/blocks/0/payload") == 4
    assert doc.line("/blocks/0/payload/text") == 5
    assert doc.line("/blocks/1/kind") == 7
    assert doc.line("/blocks/0/payload/missing") == 4  # nearest enclosing value


def test_tabs_are_a_located_syntax_error() -> None:
    doc, findings = read("blocks:\n  - kind: user\n\t  role: user\n")
    assert doc is None
    assert rules(findings) == ["GE001"] and findings[0].line == 3
    assert "tab" in findings[0].message


def test_truncated_document_is_a_syntax_error() -> None:
    doc, findings = read('blocks:\n  - kind: "user\n')
    assert doc is None and rules(findings) == ["GE001"]


def test_duplicate_keys_are_reported_where_the_second_one_is() -> None:
    doc, findings = read("blocks: []\nmetadata:\n  a.b@v1: 1\n  c.d@v1: 2\n  a.b@v1: 3\n")
    assert rules(findings) == ["GE003"]
    assert findings[0].line == 5 and findings[0].pointer == "/metadata/a.b@v1"
    assert "first at line 3" in findings[0].message
    assert doc is not None and doc.value["metadata"]["a.b@v1"] == 1


def test_merge_keys_apply_and_explicit_keys_win() -> None:
    doc, findings = read("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n")
    assert findings == [] and doc is not None
    assert doc.value["m"] == {"x": 1, "y": 3}


def test_aliases_share_values_without_copying() -> None:
    doc, findings = read("a: &p {text: hi}\nb: *p\n")
    assert findings == [] and doc is not None
    assert doc.value["a"] is doc.value["b"]


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 12):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]")
    # refused before anything is expanded: 10**11 nodes would need terabytes, so a peak of a
    # few MiB proves the aliases were counted, not built (memory, unlike time, is not load-bound)
    tracemalloc.start()
    try:
        doc, findings = read("\n".join(lines) + "\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak
    assert doc is None and rules(findings) == ["GE004"]
    assert "alias" in findings[0].message


def test_recursive_and_undefined_aliases_are_errors() -> None:
    _, findings = read("a: &x [1, *x]\n")
    assert rules(findings) == ["GE001"] and "recursive" in findings[0].message
    _, findings = read("a: *nope\n")
    assert rules(findings) == ["GE001"] and "not defined" in findings[0].message


@pytest.mark.parametrize("style", ["flow", "block"])
def test_deep_nesting_is_refused_not_a_crash(style: str) -> None:
    depth = MAX_DEPTH + 50
    if style == "flow":
        text = "a: " + "[" * depth + "]" * depth + "\n"
    else:
        text = "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "v\n"
    doc, findings = read(text)
    assert doc is None and rules(findings) == ["GE004"]


def test_nesting_within_the_limit_is_read() -> None:
    depth = MAX_DEPTH - 10
    doc, findings = read("a: " + "[" * depth + "]" * depth + "\n")
    assert findings == [] and doc is not None


def test_a_file_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    p = tmp_path / "big.yaml"
    p.write_text("blocks: []\n" + "# padding\n" * 100)
    items = list(read_yaml(p, max_bytes=64))
    assert [i.rule for i in items if isinstance(i, Finding)] == ["GE004"]
    assert not any(isinstance(i, Document) for i in items)


def test_invalid_utf8_is_located() -> None:
    _, findings = read(b"blocks: []\nid: caf\xe9\n")
    assert rules(findings) == ["GE002"] and findings[0].line == 2


def test_control_characters_are_a_located_error() -> None:
    _, findings = read("blocks: []\nid: a\x07b\n")
    assert rules(findings) == ["GE001"] and findings[0].line == 2


def test_bom_is_accepted() -> None:
    doc, findings = read(b"\xef\xbb\xbfblocks: []\n")
    assert findings == [] and doc is not None and doc.value == {"blocks": []}


def test_non_json_values_are_reported() -> None:
    _, findings = read("blocks: []\nmetadata:\n  a.b@v1: .inf\n  1: x\n  ? [k]\n  : v\n")
    assert rules(findings).count("GE007") == 3
    assert {f.line for f in findings} == {3, 4, 5}


def test_tagged_scalars() -> None:
    doc, findings = read("a: !!binary aGVsbG8=\nb: !!float 1\nc: !!timestamp 2024-01-01\n")
    assert findings == [] and doc is not None
    assert isinstance(doc.value["a"], Binary) and doc.value["a"] == "aGVsbG8="
    assert doc.value["b"] == 1.0 and isinstance(doc.value["b"], float)
    assert doc.value["c"] == "2024-01-01"
    _, findings = read("a: !!int abc\n")
    assert rules(findings) == ["GE001"]
    _, findings = read("a: !!binary not*base64\n")
    assert rules(findings) == ["GE001"]


def test_empty_and_extra_documents() -> None:
    assert rules(read("")[1]) == ["GE005"]
    assert rules(read("# only a comment\n")[1]) == ["GE005"]
    doc, findings = read("blocks: []\n---\nblocks: [oops\n")
    assert rules(findings) == ["GE006"] and doc is not None  # the 2nd document is not parsed


# -- writing --------------------------------------------------------------------------

TRICKY = [
    "yes",
    "no",
    "on",
    "0o17",
    "012",
    "0x1F",
    "1_000",
    "1:20",
    ".NaN",
    "-.inf",
    "~",
    "null",
    "",
    "2024-01-01",
    "true",
    "False",
    " lead",
    "trail ",
    "a: b",
    "- x",
    "#c",
    "@x",
    "`x",
    "'q'",
    '"q"',
    "multi\nline",
    "tab\there",
    "nel\x85",
    "ls\u2028",
    "bom\ufeff",
    "é",
    "日本",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(TRICKY),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text() | st.sampled_from(TRICKY), inner, max_size=4),
    max_leaves=20,
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b) and type(a) is type(b) if not isinstance(a, (dict, list)) else a == b


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_dump_reads_back_identically_here_and_in_pyyaml(value: Any) -> None:
    text = dump({"v": value})
    doc, findings = read(text)
    assert findings == [] and doc is not None
    assert doc.value == {"v": value}
    assert yaml.safe_load(text) == {"v": value}  # YAML 1.1 readers agree


def test_dump_writes_binary_as_binary_and_never_aliases() -> None:
    shared = {"x": 1}
    text = dump({"a": shared, "b": shared, "c": Binary("aGVsbG8=")})
    assert "&" not in text and "*" not in text
    assert "!!binary" in text
    doc, _ = read(text)
    assert doc is not None and doc.value == {"a": {"x": 1}, "b": {"x": 1}, "c": "aGVsbG8="}
