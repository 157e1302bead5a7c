"""What the peer formats' convert tests (langchain, pydantic-ai, otel-genai) share: the
canonical fixture pieces, reading a JSONL output, the "damaged input" strategy and the
never-crash check it feeds. Each format's module keeps its own assertions."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import strategies as st

from conformance.api import validate
from conformance.convert import convert
from conformance.core.errors import InputError

BASE = {"session_id": "s1", "metadata": {}, "schema_version": 1}
META = {"model": "openai:gpt-4o", "provider": "openai", "routing": {"mode": "default", "chosen_model": "openai:gpt-4o", "reason": "default"},
        "usage": {"input_tokens": 3, "output_tokens": 5, "cost_usd": "0", "pricing_version": "v1", "latency_ms": 1}}  # fmt: skip
TID = "tu_01J0000000000000000000000A"


def jsonl(path: Path) -> list[Any]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def convert_additive_block_field(name: str, tmp_path: Path) -> list[Any]:
    """Convert one canonical user message whose second text block carries `cache_control`
    (a field no canonical v1 block defines) to `name`; the findings."""
    m = {**BASE, "id": "01J00000000000000000000001", "created_at": "2024-06-01T00:00:00.000001Z", "role": "user",
         "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}]}  # fmt: skip
    src = tmp_path / "s.jsonl"
    src.write_bytes(orjson.dumps(m) + b"\n")
    return list(convert("canonical", name, src, tmp_path / "o.json"))


@st.composite
def damaged(draw: st.DrawFn, valid: st.SearchStrategy[Any], junk: st.SearchStrategy[Any], max_depth: int) -> Any:
    """A value of `valid` with one value somewhere (at most `max_depth` levels down)
    replaced by a value of `junk`."""
    doc: Any = draw(valid)
    node, key = doc, None
    for _ in range(draw(st.integers(1, max_depth))):
        keys = list(range(len(node))) if isinstance(node, list) else sorted(node) if isinstance(node, dict) else []
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        if draw(st.booleans()) or not isinstance(node[key], (list, dict)) or not node[key]:
            break
        node = node[key]
        key = None
    if key is not None:
        node[key] = draw(junk)
    return doc


def reported_or_converts(name: str, prefix: str, src_name: str, doc: Any) -> None:
    """`doc` (as `src_name`) either validates with errors that are `prefix` rules on a
    line, and then convert refuses it, or it converts to canonical."""
    with tempfile.TemporaryDirectory() as d:
        src, mid = Path(d) / src_name, Path(d) / "c.jsonl"
        src.write_bytes(orjson.dumps(doc))
        errors = [f for f in validate([src], fmt=name).findings if f.severity.name == "ERROR"]
        if errors:
            assert all(f.rule.startswith(prefix) and f.line is not None for f in errors)
            with pytest.raises(InputError):
                convert(name, "canonical", src, mid)
        else:
            convert(name, "canonical", src, mid)  # the engine validates the canonical output
