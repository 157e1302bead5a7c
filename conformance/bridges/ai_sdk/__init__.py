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


def _only(pattern: str) -> str:
    """A gap's `when` for one TC802 difference: the failure's reason is that difference
    alone (`runner.declared_gaps` tries each difference of a list on its own)."""
    return rf"^{pattern} \(compared"


NAMESPACED_BLOCK_GAP = Gap(
    ("TC802",),
    ("*",),
    "a block canonical keeps as a namespaced block (§10.3: Bedrock's `json` tool result content, Anthropic's "
    "`document`; its `raw` is the reference adapter's own, §6.5) has no V3 prompt part, so it is dropped with "
    "the §7.3 WARN line",
    when=_only(r"/messages/\d+/content/\d+/toolResult/content: \d+ items recorded, \d+ rendered"),
)
IMAGE_DETAIL = "`detail` of an image: canonical ImageBlock has no detail, so the V3 file part carries none"
TOOL_STRICT = (
    "`strict` of a function tool: the recording's value lives only in the reference adapter's provider_raw "
    "(`tool_extras`), which another adapter must not read (§6.5); canonical ToolDefinition has no field"
)


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
    bridge_gaps: ClassVar[tuple[Gap, ...]] = (
        Gap(
            ("TC802",),
            ("cache.yaml#*",),
            "`cache_control` on system blocks: canonical keeps it in the reference adapter's provider_raw only "
            "(§6.5), so the V3 prompt carries none (the bridge declares prompt caching false)",
            when=_only(r"/system/\d+/cache_control: missing from rendered \(recorded [^;]*\)"),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "@ai-sdk/anthropic asks for fine-grained tool streaming (`eager_input_streaming: true`, documented by "
            "Anthropic) on every tool of a streamed request unless told not to; canonical ToolDefinition has no "
            "field that says either way, so the package's default is what goes",
            when=_only(r"/tools/\d+/eager_input_streaming: only in rendered \(true\)"),
        ),
    )


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
    bridge_gaps: ClassVar[tuple[Gap, ...]] = (
        Gap(
            ("TC802",), ("*",), TOOL_STRICT, when=_only(r"/tools/\d+/function/strict: missing from rendered \([^;]*\)")
        ),
        Gap(
            ("TC802",),
            ("image.yaml#*",),
            IMAGE_DETAIL,
            when=_only(r"/messages/\d+/content/\d+/image_url/detail: missing from rendered \([^;]*\)"),
        ),
    )


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
    bridge_gaps: ClassVar[tuple[Gap, ...]] = (
        Gap(("TC802",), ("*",), TOOL_STRICT, when=_only(r"/tools/\d+/strict: missing from rendered \([^;]*\)")),
        Gap(
            ("TC802",),
            ("image.yaml#*",),
            IMAGE_DETAIL,
            when=_only(r"/input/\d+/content/\d+/detail: missing from rendered \([^;]*\)"),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "the role of a system message: @ai-sdk/openai sends `developer` for a model it lists as a reasoning "
            "model (its systemMessageMode), and canonical has one system role",
            when=_only(r'/input/\d+/role: recorded "system", rendered "developer"'),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "@ai-sdk/openai leaves out sampling parameters for a model it lists as a reasoning model (it warns, "
            "relayed as the option's WARN line)",
            when=_only(r"/(temperature|top_p): missing from rendered \([^;]*\)"),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "a function_call item's own `id` (fc_...) and `status` have no field in canonical tool_use",
            when=_only(
                r'/input/\d+/(id: missing from rendered \(recorded "fc_[^"]*"\)'
                r'|status: missing from rendered \(recorded "completed"\))'
            ),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "a reasoning item's `id` (rs_...) has no field in canonical thinking, whose text joins the item's "
            "summary parts (the reference adapter's reading); the V3 reasoning part sends that text as one summary",
            when=_only(
                r'/input/\d+/(id: missing from rendered \(recorded "rs_[^"]*"\)|summary: \d+ items recorded, '
                r'\d+ rendered|summary/\d+/text: recorded "[^;]*, rendered "[^;]*)'
            ),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "@ai-sdk/openai asks for `include: [reasoning.encrypted_content]` when `store` is false for a model it "
            "lists as a reasoning model, so it can send reasoning back, and no option leaves it out",
            when=_only(r'/include: only in rendered \(\["reasoning\.encrypted_content"\]\)'),
        ),
        Gap(
            ("TC802",),
            ("refusal.yaml#*",),
            "a replayed assistant `refusal` content part: canonical has no refusal block (a refusal is the reply's "
            "text, contract §3.3), so it goes back as output_text",
            when=_only(
                r"/input/\d+/content/\d+/(refusal: missing from rendered|text: only in rendered|type: "
                r'recorded "refusal", rendered "output_text")[^;]*'
            ),
        ),
    )


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
    bridge_gaps: ClassVar[tuple[Gap, ...]] = (
        Gap(
            ("TC802",),
            ("*",),
            "canonical ToolDefinition has one input_schema: @ai-sdk/google sends it converted to `parameters` "
            "(Gemini's OpenAPI Schema subset), where a recording had `parametersJsonSchema`, and no option sends "
            "the JSON Schema as given",
            when=_only(
                r"/tools/\d+/functionDeclarations/\d+/(parameters: only in rendered|parametersJsonSchema: "
                r"missing from rendered) \([^;]*"
            ),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "Gemini issued no call ids; @ai-sdk/google gives every functionCall and functionResponse one (its "
            "toolCallId; the API's `id` is optional), so a recording without ids renders with them",
            when=_only(r"/contents/\d+/parts/\d+/(functionCall|functionResponse)/id: only in rendered \([^;]*\)"),
        ),
    )


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
    bridge_gaps: ClassVar[tuple[Gap, ...]] = (
        Gap(
            ("TC802",),
            ("*",),
            "@ai-sdk/amazon-bedrock always sends `system` (an empty list when the history has no system prompt) "
            'and `additionalModelResponseFieldPaths: ["/delta/stop_sequence"]` (to read the stop sequence back), '
            "and no option leaves them out",
            when=_only(
                r"/(system: only in rendered \(\[\]\)|additionalModelResponseFieldPaths: only in rendered "
                r'\(\["/delta/stop_sequence"\]\))'
            ),
        ),
        Gap(
            ("TC802",),
            ("cache.yaml#*",),
            "a `cachePoint` system block: canonical keeps it in the reference adapter's provider_raw only (§6.5), "
            "so the V3 prompt carries none (the bridge declares prompt caching false)",
            when=_only(r"/system: \d+ items recorded, \d+ rendered"),
        ),
        Gap(
            ("TC802",),
            ("*",),
            "`guardrailConfig` (AdapterOptions.extra): @ai-sdk/amazon-bedrock has no guardrail option (the bridge "
            "warns that it is not sent)",
            when=_only(r"/guardrailConfig: missing from rendered \([^;]*\)"),
        ),
        NAMESPACED_BLOCK_GAP,
    )


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
