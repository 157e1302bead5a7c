"""Deterministic synthetic canonical sessions: the benchmark corpus and the bundled example.

The corpus mixes every block type at realistic sizes (short user prompts, longer
assistant answers, thinking with signatures, tool calls with JSON input, tool results of
a few hundred words, the occasional small image) and satisfies every rule of the
validator, so a benchmark measures the happy path a real store mostly holds.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import orjson

from ..core import ids
from ..core.convertkit import rfc3339

_WORDS = [
    "the",
    "model",
    "reads",
    "a",
    "file",
    "and",
    "returns",
    "its",
    "summary",
    "with",
    "some",
    "context",
    "about",
    "tools",
    "data",
    "session",
    "routing",
    "provider",
    "über",
    "naïve",
    "cost",
    "tokens",
    "latency",
    "result",
    "error",
    "retry",
    "stream",
    "block",
    "image",
    "thinking",
    "signature",
    "schema",
    "validation",
    "request",
    "response",
    "adapter",
    "—",
]

MODELS = [("anthropic", "claude-sonnet-4-6", "3", "15"), ("openai", "gpt-5", "2.5", "10")]
PNG_1PX = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
    )
).decode()


def _text(r: random.Random, lo: int, hi: int) -> str:
    return " ".join(r.choice(_WORDS) for _ in range(r.randint(lo, hi)))


def _ts(micros: int) -> str:
    return rfc3339(micros)


def _ulid(micros: int, r: random.Random) -> str:
    """A ULID at `micros` with the seeded generator's 80 bits (the one encoder: conformance.core.ids)."""
    return ids.encode(((micros // 1000) << 80) | int.from_bytes(r.randbytes(10), "big"))


def _usage(r: random.Random, price_in: str, price_out: str) -> dict[str, Any]:
    i, o = r.randint(10, 6000), r.randint(1, 900)
    cost = (Decimal(i) * Decimal(price_in) + Decimal(o) * Decimal(price_out)) / Decimal(1_000_000)
    return {"input_tokens": i, "output_tokens": o, "cost_usd": f"{cost:f}", "pricing_version": "2026-05-08",
            "latency_ms": r.randint(150, 9000)}  # fmt: skip


def messages(n: int, *, seed: int = 7, session_len: int = 40) -> Iterator[dict[str, Any]]:
    """`n` valid canonical messages, in sessions of about `session_len` messages."""
    r = random.Random(seed)
    clock = 1_778_241_600_000_000  # 2026-05-08T12:00:00Z in microseconds
    emitted = 0
    while emitted < n:
        session = f"sess_{r.randrange(16**8):08x}"
        provider, model, p_in, p_out = r.choice(MODELS)
        model_id = f"{provider}:{model}"

        def meta_assistant(
            model_id: str = model_id, provider: str = provider, p_in: str = p_in, p_out: str = p_out
        ) -> dict[str, Any]:
            return {
                "model": model_id, "provider": provider,
                "routing": {"mode": "default", "chosen_model": model_id, "reason": "workspace default"},
                "usage": _usage(r, p_in, p_out),
            }  # fmt: skip

        plan: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
            ("system", [{"type": "text", "text": "You are a careful coding assistant. " + _text(r, 20, 60)}], {})
        ]
        while len(plan) < session_len:
            user: list[dict[str, Any]] = [{"type": "text", "text": _text(r, 5, 60)}]
            if r.random() < 0.05:
                user.append({"type": "image", "source": {"kind": "base64", "data": PNG_1PX}, "media_type": "image/png"})
            plan.append(("user", user, {}))
            for _ in range(r.choice((0, 1, 1, 2))):
                clock_tid = clock + len(plan) * 1000
                tid = "tu_" + _ulid(clock_tid, r)
                blocks: list[dict[str, Any]] = []
                if provider == "anthropic" and r.random() < 0.5:
                    blocks.append(
                        {
                            "type": "thinking",
                            "text": _text(r, 20, 120),
                            "signature": base64.b64encode(r.randbytes(96)).decode(),
                        }
                    )
                blocks.append({"type": "text", "text": _text(r, 5, 30)})
                blocks.append({"type": "tool_use", "id": tid, "name": r.choice(("read_file", "search_code", "run_tests")),
                               "input": {"path": f"src/{r.choice(_WORDS)}.py", "limit": r.randint(10, 400)}})  # fmt: skip
                plan.append(("assistant", blocks, meta_assistant()))
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": tid,
                    "content": [{"type": "text", "text": _text(r, 20, 300)}],
                }
                if r.random() < 0.1:
                    result["is_error"] = True
                plan.append(("tool", [result], {"parent_tool_use_id": tid}))
            plan.append(("assistant", [{"type": "text", "text": _text(r, 20, 250)}], meta_assistant()))
        for role, content, meta in plan:
            if emitted >= n:
                return
            clock += r.randint(1_000, 4_000_000)
            yield {"id": _ulid(clock, r), "session_id": session, "role": role, "content": content,
                   "metadata": meta, "created_at": _ts(clock), "schema_version": 1}  # fmt: skip
            emitted += 1


def jsonl_lines(n: int, *, seed: int = 7) -> Iterator[bytes]:
    for m in messages(n, seed=seed):
        yield orjson.dumps(m) + b"\n"


# the tool definitions of both corpora (`--tools`): every call of theirs validates against them
TOOLS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read a file of the repository.", "side_effects": "read",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                      "required": ["path"]}},
    {"name": "search_code", "description": "Search the repository.", "side_effects": "read",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "query": {"type": "string"},
                                                       "limit": {"type": "integer"}}, "required": ["path"]}},
    {"name": "run_tests", "description": "Run a command in the test folder.", "side_effects": "execute",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "command": {"type": "string"},
                                                       "limit": {"type": "integer"}}, "required": ["path"]}},
]  # fmt: skip

PRICING_YAML = """\
# Price table (canonical spec §6.4) for the synthetic corpus.
pricing_version: "2026-05-08"
models:
  anthropic:claude-sonnet-4-6:
    input_per_mtok_usd: 3.00
    output_per_mtok_usd: 15.00
    cached_read_per_mtok_usd: 0.30
    cache_write_per_mtok_usd: 3.75
  openai:gpt-5:
    input_per_mtok_usd: 2.50
    output_per_mtok_usd: 10.00
"""
