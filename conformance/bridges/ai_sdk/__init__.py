"""The Vercel AI SDK's providers as turnspec adapters (`turnspec conform ai-sdk:<api>`).

Each named bridge runs one `LanguageModelV3` of the AI SDK's provider packages in a Node
process that speaks turnspec's exec protocol (`bridge.mjs` beside this file, its pinned
`package.json` and `package-lock.json`; packages installed by `turnspec ai-sdk install`,
`install.py`), driven by the exec host (`conformance.adapters.exec`):

| bridge | AI SDK model | package | turnspec wire API |
|---|---|---|---|
| `ai-sdk:anthropic` | `createAnthropic()(id)` | @ai-sdk/anthropic | anthropic-messages |
| `ai-sdk:openai-chat` | `createOpenAI().chat(id)` | @ai-sdk/openai | openai-chat-completions |
| `ai-sdk:openai-responses` | `createOpenAI().responses(id)` | @ai-sdk/openai | openai-responses |
| `ai-sdk:gemini` | `createGoogleGenerativeAI()(id)` | @ai-sdk/google | gemini-generate-content |
| `ai-sdk:bedrock` | `createAmazonBedrock()(id)` | @ai-sdk/amazon-bedrock | bedrock-converse |

The Node program renders canonical messages as the V3 prompt and calls the provider's own
`doGenerate` / `doStream` with an injected `fetch` that captures the request, answers with
the recorded response, or streams the recorded chunks one `stream_feed` at a time; it maps
the V3 results and stream parts back to canonical form, keeps the §6.2 tool id map, and
classifies HTTP errors by the API record's error signals (the AI SDK classifies nothing).

What the AI SDK does not do at all is delegated to turnspec's reference adapter of the same
wire API, here, as the pydantic-ai and LangChain bridges do: reading a request body back
(`from_wire_request`, through the child's tool id map, so rendering back restores the
recorded ids) and the pre-flight token estimate. What its types cannot carry is declared
per bridge (`bridge_gaps`, sent to the child and listed in its hello).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from ...adapters import exec as exec_host
from ...adapters.anthropic import AnthropicAdapter
from ...adapters.base import (
    AdapterOptions,
    BaseAdapter,
    Message,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireRequest,
    WireResponse,
)
from ...adapters.bedrock import BedrockAdapter
from ...adapters.exec.manifest import DEFAULT_TIMEOUT_S, ExecConfig, ExecSettings
from ...adapters.gemini import GeminiAdapter
from ...adapters.openai_chat import OpenAIChatAdapter
from ...adapters.openai_responses import OpenAIResponsesAdapter
from ...adapters.toolids import ToolIdMap
from ...wire import registry as wire_registry
from ...wire.api import ErrorSignals
from ...wire.gemini import PROMPT_BLOCKED
from ..kit import NOT_BRIDGED, Gap, ReferenceBridge
from . import install

LIBRARY = "ai"  # the AI SDK; each bridge names its provider package (`package`)
CONFIG_ENV = "TURNSPEC_AI_SDK_CONFIG"


def _pattern(p: re.Pattern[str] | None) -> dict[str, str] | None:
    if p is None:
        return None
    return {"source": p.pattern, "flags": "i" if p.flags & re.IGNORECASE else ""}


def signals_json(signals: ErrorSignals) -> dict[str, Any]:
    """The record's error signals as the child's classifier reads them (lib/errors.mjs)."""
    return {
        "headers": {k: dict(v) for k, v in signals.headers.items()},
        "body_fields": [[pointer, dict(classes)] for pointer, classes in signals.body_fields],
        "detail_reasons": dict(signals.detail_reasons),
        "overflow_message": _pattern(signals.overflow_message),
        "overflow_when": list(signals.overflow_when) if signals.overflow_when else None,
        "status_in_body": signals.status_in_body,
        "frames": dict(signals.frames),
    }


def gap_json(g: Gap) -> dict[str, Any]:
    return {"checks": list(g.rules), "cases": list(g.subjects), "when": g.when, "reason": g.reason}


def versions(folder: Path | None = None) -> dict[str, str]:
    """The installed version of each AI SDK package the bridges run (the docs table names
    them), read from the install folder's lock; {} when they are not installed."""
    try:
        lock = json.loads(((folder or install.default_dir()) / "package-lock.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    packages = lock.get("packages") or {}
    out = {}
    for name in ("ai", "@ai-sdk/provider", *(cls.package for cls in BRIDGES.values())):
        version = (packages.get(f"node_modules/{name}") or {}).get("version")
        if isinstance(version, str):
            out[name] = version
    return out


class AiSdkBridge(ReferenceBridge):
    """An AI SDK provider model, run by the Node program (subclasses name the API)."""

    api: ClassVar[str]  # the program's argument (lib/providers.mjs)
    package: ClassVar[str]  # the npm package of the provider

    def __init__(self, settings: ExecSettings | None = None, folder: Path | None = None) -> None:
        super().__init__()
        where = install.require(folder)
        node = install.node()
        assert node is not None  # install.require checked it
        s = settings or ExecSettings()
        env = {install.ENV_DIR: str(where), CONFIG_ENV: json.dumps(self.child_config())}
        command = (node, str(install.PROGRAM), self.api)
        config = ExecConfig(self.name, command, None, env, s.timeout or DEFAULT_TIMEOUT_S, s.validate)
        self.child = exec_host.start(config)
        # the reference adapter reads requests back through the child's map, so rendering
        # them back (in the child) restores the recorded provider ids
        self.reference.tool_id_map = self.tool_id_map  # type: ignore[method-assign]

    prompt_blocked: ClassVar[str | None] = None  # the record's stop-reason row of a blocked prompt

    @classmethod
    def child_config(cls) -> dict[str, Any]:
        """What the child declares in its hello and needs from the API's record."""
        record = wire_registry.get(cls.wire_api)
        return {
            "prompt_blocked": cls.prompt_blocked,
            "name": cls.name,
            "provider": cls.provider,
            "wire_api": cls.wire_api,
            "capabilities": dict(cls.capabilities),
            "provider_tool_id": cls.provider_tool_id.pattern,
            "cassette_folders": list(cls.cassette_folders),
            "tool_errors_in_band": cls.tool_errors_in_band,
            "gaps": [gap_json(g) for g in cls.bridge_gaps],
            "stop_reasons": dict(record.stop_reasons),
            "signals": signals_json(record.errors),
            "input_counts_cache": cls.input_counts_cache,
            "headers": [h.name for h in (record.endpoint.headers if record.endpoint is not None else ())],
        }

    def close(self) -> None:
        self.child.close()

    def take_faults(self) -> list[str]:
        return self.child.take_faults()

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        return self.child.tool_id_map(session_id)  # type: ignore[return-value]  # the same calls

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        self.note_url_images(messages)
        return self.child.to_wire(messages, tools, options)

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        return self.child.from_wire_response(response, request_context)

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return self.child.stream_response(chunks, context)

    def cancel(self, request_id: str) -> bool:
        return self.child.cancel(request_id)  # type: ignore[attr-defined, no-any-return]  # the child offers cancel


def _capabilities(reference: type[BaseAdapter], **changes: Any) -> Mapping[str, Any]:
    return {**reference.capabilities, **NOT_BRIDGED, **changes}


class AnthropicBridge(AiSdkBridge):
    """@ai-sdk/anthropic's messages model."""

    name: ClassVar[str] = "ai-sdk:anthropic"
    provider: ClassVar[str] = "anthropic"
    wire_api: ClassVar[str] = "anthropic-messages"
    api = "anthropic"
    package = "@ai-sdk/anthropic"
    reference_class = AnthropicAdapter
    input_counts_cache = False  # Messages `usage.input_tokens` excludes cache reads and writes
    cassette_folders = ("anthropic",)
    provider_tool_id: ClassVar[re.Pattern[str]] = AnthropicAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = _capabilities(AnthropicAdapter)
    bridge_gaps: ClassVar[tuple[Gap, ...]] = ()


class OpenAIChatBridge(AiSdkBridge):
    """@ai-sdk/openai's chat model (Chat Completions)."""

    name: ClassVar[str] = "ai-sdk:openai-chat"
    provider: ClassVar[str] = "openai"
    wire_api: ClassVar[str] = "openai-chat-completions"
    api = "openai-chat"
    package = "@ai-sdk/openai"
    reference_class = OpenAIChatAdapter
    cassette_folders = ("openai-chat",)
    provider_tool_id: ClassVar[re.Pattern[str]] = OpenAIChatAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = _capabilities(OpenAIChatAdapter)
    bridge_gaps: ClassVar[tuple[Gap, ...]] = ()


class OpenAIResponsesBridge(AiSdkBridge):
    """@ai-sdk/openai's responses model (Responses API)."""

    name: ClassVar[str] = "ai-sdk:openai-responses"
    provider: ClassVar[str] = "openai"
    wire_api: ClassVar[str] = "openai-responses"
    api = "openai-responses"
    package = "@ai-sdk/openai"
    reference_class = OpenAIResponsesAdapter
    cassette_folders = ("openai-responses",)
    provider_tool_id: ClassVar[re.Pattern[str]] = OpenAIResponsesAdapter.provider_tool_id
    # @ai-sdk/openai sends system messages as `system`/`developer` input items, in place
    capabilities: ClassVar[Mapping[str, Any]] = _capabilities(
        OpenAIResponsesAdapter, supports_system_messages_in_list=True
    )
    bridge_gaps: ClassVar[tuple[Gap, ...]] = ()


class GeminiBridge(AiSdkBridge):
    """@ai-sdk/google's generative AI model (Gemini API `generateContent`)."""

    name: ClassVar[str] = "ai-sdk:gemini"
    provider: ClassVar[str] = "gemini"
    wire_api: ClassVar[str] = "gemini-generate-content"
    api = "gemini"
    package = "@ai-sdk/google"
    reference_class = GeminiAdapter
    # canonical's Gemini buckets are disjoint (wire.gemini.usage_of: cached taken out of input)
    input_counts_cache = False
    prompt_blocked = PROMPT_BLOCKED
    cassette_folders = ("gemini",)
    provider_tool_id: ClassVar[re.Pattern[str]] = GeminiAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = _capabilities(GeminiAdapter)
    bridge_gaps: ClassVar[tuple[Gap, ...]] = ()


class BedrockBridge(AiSdkBridge):
    """@ai-sdk/amazon-bedrock's model (Bedrock Converse)."""

    name: ClassVar[str] = "ai-sdk:bedrock"
    provider: ClassVar[str] = "bedrock"
    wire_api: ClassVar[str] = "bedrock-converse"
    api = "bedrock"
    package = "@ai-sdk/amazon-bedrock"
    reference_class = BedrockAdapter
    input_counts_cache = False  # Converse `usage.inputTokens` excludes cache reads and writes
    cassette_folders = ("bedrock",)
    provider_tool_id: ClassVar[re.Pattern[str]] = BedrockAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = _capabilities(BedrockAdapter)
    bridge_gaps: ClassVar[tuple[Gap, ...]] = ()


BRIDGES: dict[str, type[AiSdkBridge]] = {
    "anthropic": AnthropicBridge,
    "openai-chat": OpenAIChatBridge,
    "openai-responses": OpenAIResponsesBridge,
    "gemini": GeminiBridge,
    "bedrock": BedrockBridge,
}
"""`ai-sdk:<api>` -> its bridge class (`adapters.registry` resolves the names)."""


def load_bridge(api: str, ref: str, settings: ExecSettings | None = None) -> AiSdkBridge | None:
    """The bridge `ai-sdk:<api>` names, its child started (None for an unknown API)."""
    cls = BRIDGES.get(api)
    return None if cls is None else cls(settings)
