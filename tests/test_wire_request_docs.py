"""Issue 37 item 3: the request schemas follow the providers' current docs.

Each field added from the docs carries the doc's sentence in its `description`, and each
walked schema records which docs it follows (`x-docs-version`). The bodies below are written
from the same reference pages (Anthropic's Messages create, OpenAI's chat/create and
responses/create), never from an adapter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.wire import registry
from conformance.wire import schemas as wire_schemas

ROOT = Path(__file__).resolve().parents[1]
WALKED = ("anthropic-messages", "openai-chat", "openai-responses", "gemini")


def _errors(api: str, body: dict[str, Any]) -> list[str]:
    v = wire_schemas.validator(registry.get(api), "request")
    assert v is not None
    return [f"{e.pointer}: {e.message}" for e in v.errors(body)]


# Messages create, `tools[]` of a custom tool: every field the reference lists
EVERY_TOOL_FIELD = {
    "type": "custom",
    "name": "get_stock_price",
    "description": "Get the current stock price for a given ticker symbol.",
    "input_schema": {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]},
    "cache_control": {"type": "ephemeral", "ttl": "1h"},
    "strict": True,
    "input_examples": [{"ticker": "AAPL"}],
    "defer_loading": False,
    "allowed_callers": ["direct"],
    "eager_input_streaming": True,
}


def _anthropic(**top: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}], **top}


def test_the_anthropic_request_schema_accepts_every_documented_tool_field():
    assert _errors("anthropic-messages", _anthropic(tools=[EVERY_TOOL_FIELD])) == []
    # the Vercel AI SDK's streamed tool definitions (issue 37): eager_input_streaming, null too
    for value in (True, False, None):
        tool = {**EVERY_TOOL_FIELD, "eager_input_streaming": value}
        assert _errors("anthropic-messages", _anthropic(tools=[tool], stream=True)) == []
    # the tool stays closed to what the docs list, and each field to its type
    assert _errors("anthropic-messages", _anthropic(tools=[{**EVERY_TOOL_FIELD, "eager_streaming": True}]))
    assert _errors("anthropic-messages", _anthropic(tools=[{**EVERY_TOOL_FIELD, "eager_input_streaming": "yes"}]))


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("cache_control", {"type": "ephemeral"}, {"type": "persistent"}),
        ("container", "container_011CPR5CNjB747bTd36fQLFk", 5),
        ("inference_geo", "us", 5),
        (
            "output_config",
            {"effort": "high", "format": {"type": "json_schema", "schema": {"type": "object"}}},
            {"effort": "extreme"},
        ),
    ],
)
def test_anthropic_top_level_parameters_of_the_docs(field, good, bad):
    assert _errors("anthropic-messages", _anthropic(**{field: good})) == []
    assert _errors("anthropic-messages", _anthropic(**{field: bad}))


def _chat(**top: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}], **top}


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        (
            "functions",
            [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}],
            [{"name": "get weather"}],
        ),
        ("function_call", {"name": "get_weather"}, "always"),
        ("logprobs", True, "yes"),
        ("top_logprobs", 5, 21),
        ("prompt_cache_retention", "24h", "1w"),
        ("safety_identifier", "user-123", 5),
        ("service_tier", "flex", "fastest"),
        ("verbosity", "low", "terse"),
        ("prediction", {"type": "content", "content": "def f(): ..."}, {"type": "diff"}),
        ("seed", 7, "seven"),
    ],
)
def test_chat_top_level_parameters_of_the_docs(field, good, bad):
    assert _errors("openai-chat-completions", _chat(**{field: good})) == []
    assert _errors("openai-chat-completions", _chat(**{field: bad}))


def test_responses_parameters_and_custom_tools_of_the_docs():
    body = {
        "model": "gpt-5",
        "input": "Hi",
        "prompt": {"id": "pmpt_123", "version": "2", "variables": {"city": "Oslo"}},
        "top_logprobs": 3,
        "tools": [{"type": "custom", "name": "code_exec", "description": "Executes arbitrary Python code."}],
    }
    assert _errors("openai-responses", body) == []
    assert _errors("openai-responses", {**body, "prompt": {"version": "2"}})  # `id` is required
    assert _errors("openai-responses", {**body, "tools": [{"type": "custom", "name": "x", "grammar": "lark"}]})


@pytest.mark.parametrize("folder", WALKED)
def test_each_walked_schema_says_which_docs_it_follows(folder):
    doc = json.loads((ROOT / "schemas" / "wire" / folder / "request.json").read_text(encoding="utf-8"))
    record = doc["x-docs-version"]
    assert set(record) == {"api", "read", "what"} and record["read"] >= "2026-01-01" and record["what"]


# the top-level parameters the walk of issue 37 added, each with its doc sentence
ADDED = {
    "anthropic-messages": ("cache_control", "container", "inference_geo", "output_config"),
    "openai-chat": (
        "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs", "metadata",
        "modalities", "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_retention",
        "safety_identifier", "seed", "service_tier", "store", "top_logprobs", "user", "verbosity",
        "web_search_options",
    ),
    "openai-responses": ("prompt", "prompt_cache_retention", "top_logprobs"),
}  # fmt: skip


@pytest.mark.parametrize("folder", sorted(ADDED))
def test_every_added_field_carries_its_doc_sentence(folder):
    doc = json.loads((ROOT / "schemas" / "wire" / folder / "request.json").read_text(encoding="utf-8"))
    missing = [k for k in ADDED[folder] if len(str(doc["properties"].get(k, {}).get("description", ""))) < 20]
    assert missing == []
    tool = doc["$defs"]["custom_tool"]["properties"] if folder == "anthropic-messages" else {}
    assert folder != "anthropic-messages" or "eager input streaming" in tool["eager_input_streaming"]["description"]


def test_gemini_generation_config_fields_of_the_docs():
    ask = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    config = {
        "presencePenalty": 0.5,
        "frequencyPenalty": 0.2,
        "responseLogprobs": True,
        "logprobs": 3,
        "enableEnhancedCivicAnswers": False,
        "mediaResolution": "MEDIA_RESOLUTION_LOW",
    }
    assert _errors("gemini-generate-content", {**ask, "generationConfig": config}) == []
    assert _errors("gemini-generate-content", {**ask, "generationConfig": {"presencePenalty": "high"}})
    doc = json.loads((ROOT / "schemas" / "wire" / "gemini" / "request.json").read_text(encoding="utf-8"))
    fields = doc["$defs"]["generation_config"]["properties"]
    assert all(fields[k]["description"].startswith("Optional.") for k in config)
