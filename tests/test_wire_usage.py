"""The usage probes of the wire records read recorded token counts as counts, or find none.

A recording from another project may carry a count the docs do not type that way (a
string, a fraction, a negative, null). Failed before: every record's probe called `int()`
on it, so a string count raised ValueError out of the check (and `turnspec conform`
stopped), a fraction was truncated and a negative read as a count.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.api import WireApi, token_buckets, token_count
from conformance.wire.bedrock import BEDROCK_CONVERSE
from conformance.wire.gemini import GEMINI
from conformance.wire.ollama import OLLAMA_CHAT
from conformance.wire.openai_chat import OPENAI_CHAT
from conformance.wire.openai_responses import OPENAI_RESPONSES


def _anthropic(n: Any) -> dict[str, Any]:
    return {"usage": {"input_tokens": n, "output_tokens": 5, "cache_read_input_tokens": 2}}


def _chat(n: Any) -> dict[str, Any]:
    return {"usage": {"prompt_tokens": n, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 2}}}


def _responses(n: Any) -> dict[str, Any]:
    return {"usage": {"input_tokens": n, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 2}}}


def _gemini(n: Any) -> dict[str, Any]:
    return {"usageMetadata": {"promptTokenCount": n, "candidatesTokenCount": 5, "cachedContentTokenCount": 2}}


def _bedrock(n: Any) -> dict[str, Any]:
    return {"usage": {"inputTokens": n, "outputTokens": 5, "cacheReadInputTokens": 2}}


def _ollama(n: Any) -> dict[str, Any]:
    return {"prompt_eval_count": n, "eval_count": 5}


# (record, body with input count n, input bucket for n = 12: APIs that count cache reads in
# their input report 12 - 2; the others report the cache read apart, cache read)
CASES = [
    (ANTHROPIC_MESSAGES, _anthropic, 12, 2),
    (OPENAI_CHAT, _chat, 10, 2),
    (OPENAI_RESPONSES, _responses, 10, 2),
    (GEMINI, _gemini, 10, 2),
    (BEDROCK_CONVERSE, _bedrock, 12, 2),
    (OLLAMA_CHAT, _ollama, 12, 0),
]
IDS = [c[0].name for c in CASES]


@pytest.mark.parametrize(("api", "body", "input_", "read"), CASES, ids=IDS)
def test_a_count_reads_as_its_buckets(api: WireApi, body: Any, input_: int, read: int) -> None:
    got = api.probes.response_usage(body(12))
    assert got == {"input": input_, "output": 5, "cache_read": read, "cache_write": 0}
    assert api.probes.response_usage(body(12.0)) == got  # JSON has one number type


@pytest.mark.parametrize("bad", ["12", "n/a", 12.5, -3, True, [12], {"n": 12}])
@pytest.mark.parametrize(("api", "body", "input_", "read"), CASES, ids=IDS)
def test_a_count_that_is_no_count_is_no_usage(api: WireApi, body: Any, input_: int, read: int, bad: Any) -> None:
    assert api.probes.response_usage(body(bad)) is None


def test_absent_and_null_counts_are_zero() -> None:
    assert token_count({"a": None}, "a") == 0 and token_count({}, "a", "b") == 0
    assert token_count({"a": {"b": 7}}, "a", "b") == 7 and token_count({"a": 7}, "a", "b") == 0
    assert token_buckets({"prompt_tokens": 3, "prompt_tokens_details": None}, (("prompt_tokens",),), ()) == {
        "input": 3,
        "output": 0,
        "cache_read": 0,
        "cache_write": 0,
    }
    assert token_buckets("12", (("x",),), ()) is None
    # cache reads above the input count (a server's rounding): never a negative input
    assert token_buckets({"i": 1, "c": 4}, (("i",),), (), ("c",), cached_in_input=True) == {
        "input": 0,
        "output": 0,
        "cache_read": 4,
        "cache_write": 0,
    }
