"""The wire schemas of the two reference APIs, written from the providers' docs, as an oracle.

Every request the reference adapters render for the project's test conversations, and every
body of the real recordings in ../shared/samples/wire for these APIs (provider hosts only:
compatible servers add fields of their own), must validate with the stock
`Draft202012Validator`. Hand-written bodies that break a documented rule must not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import shared_paths
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conformance.adapters import AdapterOptions, AnthropicAdapter, OpenAIChatAdapter
from conformance.adapters.base import sse_events
from conformance.adapters.bedrock import BedrockAdapter
from conformance.strategies import blocks_for, conversations
from conformance.suite.cassettes import iter_cassettes
from conformance.suite.scripts import TOOLS, conversation
from conformance.wire import registry
from conformance.wire.api import WireApi

ROOT = Path(__file__).resolve().parent.parent
WIRE = ROOT / "schemas" / "wire"
SAMPLES = shared_paths.WIRE
DIRS = ("anthropic-messages", "anthropic-count-tokens", "openai-chat", "bedrock-converse", "bedrock-count-tokens")


def _load() -> dict[str, dict[str, Any]]:
    docs: dict[str, dict[str, Any]] = {}
    for d in DIRS:
        for p in sorted((WIRE / d).glob("*.json")):
            docs[f"{d}/{p.name}"] = json.loads(p.read_text(encoding="utf-8"))
    return docs


DOCS = _load()
REGISTRY: Registry = Registry().with_resources(
    (doc["$id"], Resource.from_contents(doc, default_specification=DRAFT202012)) for doc in DOCS.values()
)


def validator(api_dir: str, kind: str) -> Draft202012Validator:
    return Draft202012Validator(DOCS[f"{api_dir}/{kind}.json"], registry=REGISTRY)


def problems(api_dir: str, kind: str, body: Any) -> list[str]:
    return [
        f"{kind} {e.json_path}: {e.message[:160]}"
        for e in validator(api_dir, kind).iter_errors(body)  # type: ignore[no-untyped-call]
    ]


@pytest.mark.parametrize("name", sorted(DOCS))
def test_schema_files_are_valid_2020_12_with_id_and_sources(name):
    doc = DOCS[name]
    Draft202012Validator.check_schema(doc)
    folder, file = name.split("/")
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"https://turnspec.dev/schemas/wire/{folder}/{file}"
    assert doc["x-sources"] and all(u.startswith("https://") for u in doc["x-sources"])


def test_every_record_schema_dir_exists():
    for api in registry.APIS:
        if api.name in (
            "anthropic-messages",
            "anthropic-count-tokens",
            "openai-chat-completions",
            "bedrock-converse",
            "bedrock-count-tokens",
        ):
            assert (WIRE / api.schema_dir / "request.json").is_file(), api.name
            assert (WIRE / api.schema_dir / "response.json").is_file(), api.name


# -- what the adapters render -----------------------------------------------------------------

ADAPTERS = [
    (AnthropicAdapter, "anthropic-messages"),
    (OpenAIChatAdapter, "openai-chat"),
    (BedrockAdapter, "bedrock-converse"),
]
IDS = ["anthropic", "openai-chat", "bedrock"]


@pytest.mark.parametrize(("cls", "api_dir"), ADAPTERS, ids=IDS)
@pytest.mark.parametrize("origin", ["anthropic", "openai", "google"])
@pytest.mark.parametrize("stream", [False, True])
def test_rendered_requests_validate(cls, api_dir, origin, stream):
    msgs, tools = conversation(origin)
    a = cls()
    opts = AdapterOptions(model="x:model-a", max_output_tokens=256, stream=stream, stop_sequences=("END",))
    body = a.to_wire(msgs, tools, opts).body
    assert problems(api_dir, "request", body) == []


@pytest.mark.parametrize(("cls", "api_dir"), ADAPTERS, ids=IDS)
def test_generated_conversations_render_to_valid_requests(cls, api_dir):
    a = cls()

    @settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(conversations(blocks=blocks_for(a.capabilities), max_turns=3))
    def check(session: list[dict[str, Any]]) -> None:
        body = a.to_wire(session, list(TOOLS), AdapterOptions(model="x:m", max_output_tokens=64)).body
        if not body["messages"]:
            return  # nothing sendable survived (every block dropped with its WARN line)
        assert problems(api_dir, "request", body) == []

    check()


# -- the schemas reject what the docs forbid ---------------------------------------------------

A_OK = {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "Hi"}]}


@pytest.mark.parametrize(
    "bad",
    [
        {"model": "m", "messages": []},  # max_tokens is required
        {**A_OK, "messages": [{"role": "system", "content": "x"}]},  # no system role in messages
        {
            **A_OK,
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "call.1", "name": "f", "input": {}}],
                }
            ],
        },
        {
            **A_OK,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "AA=="}}
                    ],
                }
            ],
        },
        {
            **A_OK,
            "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}],
        },
        {
            **A_OK,
            "messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}],
        },  # no signature
        {
            **A_OK,
            "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}],
        },
        {**A_OK, "thinking": {"type": "enabled", "budget_tokens": 100}},
    ],
)
def test_anthropic_request_schema_rejects(bad):
    assert problems("anthropic-messages", "request", bad)


def test_anthropic_request_schema_accepts_documented_forms():
    body = {
        **A_OK,
        "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [
            {"name": "get_weather", "description": "d", "input_schema": {"type": "object", "properties": {}}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://e.com/a"}}]},
            {"role": "assistant", "content": [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}]},
        ],
    }
    assert problems("anthropic-messages", "request", body) == []


B_OK = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}


@pytest.mark.parametrize(
    "bad",
    [
        {**B_OK, "model": "m"},  # the model is in the URL (Converse request syntax)
        {**B_OK, "stream": True},  # streaming is its own operation, ConverseStream
        {"messages": [{"role": "system", "content": [{"text": "x"}]}]},  # ConversationRole: user | assistant
        {"messages": [{"role": "user", "content": [{"text": "a", "image": {}}]}]},  # a union of one member
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]},  # no `type` member
        {"messages": [{"role": "user", "content": [{"image": {"format": "bmp", "source": {"bytes": "AA=="}}}]}]},
        {"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": [], "status": "failed"}}]}]},
        {"messages": [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "a b", "name": "f", "input": {}}}]}]},
        {**B_OK, "system": [{"text": ""}]},  # NonEmptyString
        {**B_OK, "inferenceConfig": {"maxTokens": 0}},  # min 1
        {**B_OK, "inferenceConfig": {"temperature": 1.5}},  # max 1
        {**B_OK, "toolConfig": {"tools": []}},  # min 1
        {**B_OK, "toolConfig": {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"schema": {}}}}]}},
    ],
)  # fmt: skip
def test_bedrock_request_schema_rejects(bad):
    assert problems("bedrock-converse", "request", bad)


def test_bedrock_request_schema_accepts_documented_forms():
    body = {
        "messages": [
            {"role": "user", "content": [{"text": "Hi"}, {"cachePoint": {"type": "default"}}]},
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}},
                    {"reasoningContent": {"redactedContent": "AAEC"}},
                    {"toolUse": {"toolUseId": "tooluse_1.a:b-c", "name": "f", "input": {"x": 1}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "tooluse_1.a:b-c", "content": [{"json": {"ok": True}}], "status": "error"}},
                    {"document": {"format": "pdf", "name": "doc", "source": {"s3Location": {"uri": "s3://bucket/a.pdf"}}}},
                ],
            },
        ],
        "system": [{"text": "s"}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
        "inferenceConfig": {"maxTokens": 16, "temperature": 0.5, "topP": 0.9, "stopSequences": ["END"]},
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}, {"cachePoint": {"type": "default"}}],
            "toolChoice": {"auto": {}},
        },
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }  # fmt: skip
    assert problems("bedrock-converse", "request", body) == []


O_OK = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}


@pytest.mark.parametrize(
    "bad",
    [
        {"model": "gpt-4o", "messages": []},
        {**O_OK, "messages": [{"role": "tool", "content": "x"}]},  # tool_call_id required
        {
            **O_OK,
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}],
                }
            ],
        },  # arguments is a JSON string
        {**O_OK, "messages": [{"role": "assistant"}]},  # neither content nor tool_calls
        {
            **O_OK,
            "messages": [
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png,AA"}}]}
            ],
        },
        {**O_OK, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]},
        {**O_OK, "stream_options": {"include_usage": "yes"}},
        {**O_OK, "stop": ["a", "b", "c", "d", "e"]},
    ],
)
def test_openai_request_schema_rejects(bad):
    assert problems("openai-chat", "request", bad)


def test_stream_event_schemas_check_known_events():
    bad_a = [
        {"type": "content_block_delta", "index": -1, "delta": {"type": "text_delta", "text": "x"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": {}}},
        {"type": "message_delta", "delta": {"stop_reason": "done"}, "usage": {"output_tokens": 1}},
    ]
    for ev in bad_a:
        assert problems("anthropic-messages", "stream-event", ev), ev
    assert problems("anthropic-messages", "stream-event", {"type": "message_stop"}) == []
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "halted"}],
    }
    assert problems("openai-chat", "stream-event", chunk)
    chunk["choices"][0]["finish_reason"] = None
    assert problems("openai-chat", "stream-event", chunk) == []


# -- real recordings ----------------------------------------------------------------------------

API_DIR = {"anthropic-messages": "anthropic-messages", "anthropic-count-tokens": "anthropic-count-tokens"}
API_DIR["openai-chat-completions"] = "openai-chat"


def _samples(root: Path = SAMPLES) -> Iterator[tuple[str, WireApi, Any]]:
    for c in iter_cassettes(root):
        for it in c.interactions:
            api = registry.api_for_url(it.uri)
            if api is None or api.name not in API_DIR:
                continue
            if not api.own_host(urlsplit(it.uri).netloc):
                continue  # a compatible server (Ollama, a proxy): its own extensions
            yield it.label, api, it


def _stream_bodies(text: str) -> Iterator[Any]:
    for ev in sse_events([text]):
        data = ev.data.strip()
        if data and data != "[DONE]":
            yield json.loads(data)


@pytest.mark.parametrize("root", [SAMPLES, ROOT / "cassettes"], ids=["shared-samples", "own-cassettes"])
def test_recordings_validate(root):
    """Real recordings, and the project's hand-written cassettes: both agree with the docs' schemas."""
    if not root.is_dir():
        pytest.skip(f"recordings not present at {root}")
    seen, bad = 0, []
    for label, api, it in _samples(root):
        d = API_DIR[api.name]
        if isinstance(it.request_body, dict):
            seen += 1
            bad += [f"{label} {p}" for p in problems(d, "request", it.request_body)]
        if it.status >= 400:
            if isinstance(it.response_json, dict):
                seen += 1
                bad += [f"{label} {p}" for p in problems(d, "error", it.response_json)]
        elif it.is_stream:
            for i, ev in enumerate(_stream_bodies(it.response_text)):
                seen += 1
                bad += [f"{label} event {i} {p}" for p in problems(d, "stream-event", ev)]
        elif isinstance(it.response_json, dict):
            seen += 1
            bad += [f"{label} {p}" for p in problems(d, "response", it.response_json)]
    assert seen > 50, f"only {seen} bodies found under {root}"
    assert bad == [], "\n".join(bad[:20])
