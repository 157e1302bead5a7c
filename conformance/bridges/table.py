"""`nox -s bridges_table`: docs/bridges.md, each bridge's result per check against the
installed library, every failure classified (`KNOWN`).

    python -m conformance.bridges.table docs/bridges.md [--check]

A failing check no entry of `KNOWN` classifies is written as UNCLASSIFIED and the command
exits 1: a failure is a library bug (with its evidence), or a bridge gap the bridge
declares (`Gap`, reported skipped, so it never reaches this table as a failure); a suite
issue is fixed in the suite, never listed. `--check` compares with the file instead of
writing it (exit 1 when they differ).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core import escaping
from ..suite import runner
from . import ai_sdk
from . import langchain as lc
from .ai_sdk import install as ai_sdk_install
from .pydantic_ai import BRIDGES as PAI_BRIDGES
from .pydantic_ai import LIBRARY, PydanticAIBridge, library_version

BRIDGES: dict[str, type[PydanticAIBridge] | type[lc.LangChainBridge] | type[ai_sdk.AiSdkBridge]] = {
    **{cls.name: cls for cls in PAI_BRIDGES.values()},
    **{cls.name: cls for cls in lc.BRIDGES.values()},
    **{cls.name: cls for cls in ai_sdk.BRIDGES.values()},
}
"""Every shipped bridge by its `<library>:<api>` name, in the table's column order."""


def versions() -> dict[str, str]:
    """The version of each library the bridges run (the table names them): the installed
    Python packages, and the AI SDK packages the bridge's lock pins (what `turnspec ai-sdk
    install` installs, and what the table was made with)."""
    return {LIBRARY: library_version(), **lc.library_versions(), **ai_sdk.versions(ai_sdk_install.HERE)}


@dataclass(frozen=True)
class Known:
    kind: str  # "library bug" | "bridge gap"
    evidence: str


_FOREIGN = (
    "replaying an assistant turn another provider issued (a signed thinking block, and for Anthropic's turns a "
    "redacted_thinking block; tests/test_bridges.py::test_library_bug_evidence renders it), then a user turn"
)
_LC_FOREIGN = (
    "replaying an assistant turn another provider issued (a signed thinking block; "
    "tests/test_langchain_bridges.py::test_langchain_library_bug_evidence_thinking_vanishes_unannounced renders "
    "it), then a user turn"
)
KNOWN: dict[tuple[str, str], Known] = {
    ("pydantic-ai:anthropic", "TC201"): Known(
        "library bug",
        "an image block of media type `image/x-turnspec-probe` goes on the wire as an `image` source with that "
        "media type, which the Messages API's image source does not take (jpeg, png, gif, webp): no drop, no WARN",
    ),
    ("pydantic-ai:anthropic", "TC202"): Known("library bug", "the same image: its bytes reach the wire (TC201)"),
    ("pydantic-ai:anthropic", "TC203"): Known(
        "library bug", "the same image marked critical: the request renders, no error (TC201)"
    ),
    ("pydantic-ai:anthropic", "TC401"): Known(
        "library bug",
        f"{_FOREIGN}: the thinking goes out as a *user* text turn "
        '`{"role": "user", "content": [{"text": "<assistant_thinking>\\nFOREIGN-THOUGHT\\n</assistant_thinking>"}]}`, '
        "so the replayed texts gain a turn the history never had",
    ),
    ("pydantic-ai:anthropic", "TC404"): Known(
        "library bug",
        f"{_FOREIGN}: the thinking becomes a user text turn (TC401) with no §7.3 WARN line",
    ),
    ("pydantic-ai:openai-chat", "TC201"): Known(
        "library bug",
        "an assistant thinking block of this provider (Chat Completions has no thinking field) goes on the wire as "
        "`<think>` text in the assistant's `content`, and an image of media type `image/x-turnspec-probe` as a "
        "`data:image/x-turnspec-probe;base64,...` image_url (Chat takes PNG, JPEG, WEBP, GIF): no drop, no WARN",
    ),
    ("pydantic-ai:openai-chat", "TC202"): Known("library bug", "the same blocks reach the wire (TC201)"),
    ("pydantic-ai:openai-chat", "TC203"): Known(
        "library bug", "the same blocks marked critical: the request renders, no error (TC201)"
    ),
    ("pydantic-ai:openai-chat", "TC401"): Known(
        "library bug",
        f"{_FOREIGN}: the assistant's own `content` becomes "
        '`"<think>\\nFOREIGN-THOUGHT\\n</think>\\n\\n<think>\\n\\n</think>\\n\\nanswer"` when the redacted block '
        "is Anthropic's: another model's reasoning replayed as the assistant's text, and an empty `<think></think>` "
        "pair for the redacted thinking",
    ),
    ("pydantic-ai:openai-chat", "TC404"): Known("library bug", "the same request (TC401): no drop, no WARN"),
    ("pydantic-ai:openai-chat", "TC502"): Known(
        "library bug", "the same request (TC401): thinking reaches Chat Completions, which has no thinking field"
    ),
    ("pydantic-ai:openai-chat", "TC903"): Known(
        "library bug",
        "refusal.yaml#0 and #1 (a chat completion whose message carries `refusal`, `content` null; streamed, "
        "`delta.refusal` pieces): OpenAIChatModel answers with a ModelResponse of no parts (the text only in "
        "`provider_details['refusal']`), so the parsed reply has no text (parsed texts `['']`; "
        "tests/test_bridges.py::test_library_bug_evidence_chat_refusal_left_out_of_the_parts)",
    ),
    ("pydantic-ai:openai-responses", "TC201"): Known(
        "library bug",
        "an image of media type `image/x-turnspec-probe` goes out as an `input_image` data URL of that type "
        "(the Responses API takes PNG, JPEG, WEBP, GIF): no drop, no WARN",
    ),
    ("pydantic-ai:openai-responses", "TC202"): Known("library bug", "the same image reaches the wire (TC201)"),
    ("pydantic-ai:openai-responses", "TC203"): Known(
        "library bug", "the same image marked critical: the request renders, no error (TC201)"
    ),
    ("pydantic-ai:openai-responses", "TC401"): Known(
        "library bug",
        f"{_FOREIGN}: `input` gains assistant messages "
        '`{"role": "assistant", "content": "<think>\\nFOREIGN-THOUGHT\\n</think>"}` and, for Anthropic\'s '
        'redacted thinking, `{"role": "assistant", "content": "<think>\\n\\n</think>"}`',
    ),
    ("pydantic-ai:openai-responses", "TC404"): Known("library bug", "the same request (TC401): no drop, no WARN"),
    ("pydantic-ai:openai-responses", "TC903"): Known(
        "library bug",
        "a response whose output holds `function_call` items (status `completed`) is read with "
        "`finish_reason='stop'`, not its own `'tool_call'`, streamed or not; and an output message's `refusal` "
        "content part is left out of the parsed reply (parsed texts `['']`)",
    ),
    ("pydantic-ai:gemini", "TC201"): Known(
        "library bug",
        "an image of media type `image/x-turnspec-probe` goes out as `inlineData` with that `mime_type` "
        "(Gemini lists PNG, JPEG, WEBP, HEIC, HEIF): no drop, no WARN",
    ),
    ("pydantic-ai:gemini", "TC202"): Known("library bug", "the same image reaches the wire (TC201)"),
    ("pydantic-ai:gemini", "TC203"): Known(
        "library bug", "the same image marked critical: the request renders, no error (TC201)"
    ),
    ("pydantic-ai:gemini", "TC401"): Known(
        "library bug",
        'replaying a tool result: `functionResponse.response` is `{"return_value": "MARK-result-1"}`, so the '
        "result's text reads back as JSON around it; and another provider's thinking goes out as a part with "
        "`thought: true`",
    ),
    ("pydantic-ai:gemini", "TC404"): Known(
        "library bug",
        f"{_FOREIGN}: the thinking goes out as a `thought: true` part and the redacted thinking vanishes, "
        "neither with the §7.3 WARN line",
    ),
    ("pydantic-ai:gemini", "TC606"): Known(
        "library bug",
        "thinking.yaml#7/#8: the non-streamed parse of the recorded body has a trailing empty `TextPart` (the part "
        "that carries only a `thoughtSignature`), the streamed parse of the same content has none",
    ),
    ("pydantic-ai:gemini", "TC802"): Known(
        "library bug",
        'a tool result goes back as `functionResponse.response: {"return_value": ...}`, where the recording '
        'has `{"output": ...}`: the docs say \'Use "output" key to specify function output and "error" key '
        "to specify error details', else the whole object is the output; and a function call without a "
        "signature gets the dummy `thoughtSignature` `skip_thought_signature_validator`",
    ),
    ("pydantic-ai:gemini", "TC903"): Known(
        "library bug",
        "a streamed turn that ends `STOP` with `functionCall` parts is read with `finish_reason='stop'`, not "
        "`'tool_call'`",
    ),
    # LangChain (langchain-anthropic, langchain-openai): tests/test_langchain_bridges.py::test_langchain_library_bug_evidence_*
    ("langchain:anthropic", "TC201"): Known(
        "library bug",
        "an image standard block of mime_type `image/x-turnspec-probe` goes on the wire as an `image` source "
        '`{"type": "base64", "media_type": "image/x-turnspec-probe", ...}`, which the Messages API\'s image '
        "source does not take (jpeg, png, gif, webp): no drop, no warning",
    ),
    ("langchain:anthropic", "TC202"): Known("library bug", "the same image: its bytes reach the wire (TC201)"),
    ("langchain:anthropic", "TC203"): Known(
        "library bug", "the same image marked critical: the request renders, no error (TC201)"
    ),
    ("langchain:anthropic", "TC404"): Known(
        "library bug",
        f"{_LC_FOREIGN}: ChatAnthropic leaves the `reasoning` block of another model_provider out of "
        'the request (`{"role": "assistant", "content": [{"text": "answer", "type": "text"}]}`) and says nothing: '
        "no warning, no log line, so the §7.3 WARN line cannot be written",
    ),
    ("langchain:anthropic", "TC606"): Known(
        "library bug",
        "streamed usage: ChatAnthropic reads usage from `message_delta` only and skips `message_start`'s "
        "(`_make_message_chunk_from_anthropic_event`: 'don't include usage_metadata yet'), so a stream whose "
        "`message_delta.usage` holds only `output_tokens` (the API's MessageDeltaUsage makes `input_tokens` "
        "optional) is read with `input_tokens: 0` and no cache counts, where the non-streamed parse has them",
    ),
    ("langchain:anthropic", "TC904"): Known(
        "library bug",
        "the streamed recordings' usage (TC606): `input_tokens` 0 and the cache read count 0 where "
        "`message_start.usage` has them; errors.yaml#11 (an error event mid-stream) has no usage at all",
    ),
    ("langchain:openai-chat", "TC201"): Known(
        "library bug",
        "an assistant `reasoning` block (Chat Completions has no thinking field) is left out of the request "
        "silently, and an image of mime_type `image/x-turnspec-probe` goes out as a "
        "`data:image/x-turnspec-probe;base64,...` image_url (Chat takes PNG, JPEG, WEBP, GIF): no drop, no warning",
    ),
    ("langchain:openai-chat", "TC202"): Known("library bug", "the same image reaches the wire (TC201)"),
    ("langchain:openai-chat", "TC203"): Known(
        "library bug",
        "the same blocks marked critical: the thinking vanishes and the request renders, no error (TC201)",
    ),
    ("langchain:openai-chat", "TC404"): Known(
        "library bug",
        f"{_LC_FOREIGN}: the `reasoning` block is left out of the assistant message "
        '(`{"content": [{"type": "text", "text": "answer"}], "role": "assistant"}`) with no warning (TC201)',
    ),
    ("langchain:openai-chat", "TC502"): Known(
        "library bug", "the same request (TC404): thinking vanishes with no warning, so no §7.3 WARN line"
    ),
    ("langchain:openai-chat", "TC606"): Known(
        "library bug",
        "refusal.yaml#1 (a streamed refusal): the stream's aggregate has no text where the non-streamed parse "
        "holds the refusal (TC903)",
    ),
    ("langchain:openai-chat", "TC902"): Known(
        "library bug",
        'a ToolMessage with `status: "error"` goes out as `{"content": "boom", "role": "tool", "tool_call_id": ...}`: '
        "Chat Completions has no error flag, and ChatOpenAI drops the status without a warning",
    ),
    ("langchain:openai-chat", "TC903"): Known(
        "library bug",
        "refusal.yaml#1 (a streamed refusal, `delta.refusal` pieces): ChatOpenAI's chunk conversion reads a "
        "delta's `content`, `function_call` and `tool_calls` only, so the pieces vanish and the aggregated reply "
        "has no text (parsed texts `['']`); a non-streamed refusal it keeps (`additional_kwargs.refusal`, a "
        "`refusal` content block; tests/test_langchain_bridges.py::"
        "test_langchain_library_bug_evidence_streamed_refusal_dropped)",
    ),
    ("langchain:openai-chat", "TC907"): Known(
        "library bug",
        "errors.yaml#9 (an error event mid-stream): every chunk names `model`, but ChatOpenAI puts `model_name` "
        "in the response_metadata of the last chunk only, so the chunks read before the error carry none",
    ),
}


# The AI SDK (ai-sdk:<api>): tests/test_ai_sdk_bridge.py::test_ai_sdk_library_bug_evidence_* renders each
_AI_PROBE_IMAGE = (
    "an image of media type `image/x-turnspec-probe` (the user message of the TC201 probe) goes on the wire with "
    "that media type ({where}), which the API does not take ({takes}): no drop, no warning"
)
_AI_IS_ERROR = (
    "a tool result with `is_error` (V3 `error-text` output) goes out exactly as a success ({how}), and the package "
    "says nothing: no warning, so the §7.3 WARN line cannot be written"
)
_AI_FOREIGN = (
    "replaying an assistant turn another provider issued (a signed thinking block and a redacted_thinking block)"
)
KNOWN.update(
    {
        ("ai-sdk:anthropic", "TC201"): Known(
            "library bug",
            _AI_PROBE_IMAGE.format(
                where='an `image` source `{"type": "base64", "media_type": "image/x-turnspec-probe", ...}`',
                takes="jpeg, png, gif, webp",
            ),
        ),
        ("ai-sdk:anthropic", "TC202"): Known("library bug", "the same image: its bytes reach the wire (TC201)"),
        ("ai-sdk:anthropic", "TC203"): Known(
            "library bug", "the same image marked critical: the request renders, no error (TC201)"
        ),
        ("ai-sdk:anthropic", "TC904"): Known(
            "library bug",
            "errors.yaml#11 (an `error` event mid-stream): after the `error` part @ai-sdk/anthropic ends the stream "
            "with no `finish` part, so the usage `message_start` reported (input_tokens 13) never reaches the caller",
        ),
        ("ai-sdk:openai-chat", "TC201"): Known(
            "library bug",
            "an assistant `reasoning` part (a thinking or redacted_thinking block; Chat Completions has no thinking "
            "field) is left out of the request without a warning, and "
            + _AI_PROBE_IMAGE.format(
                where="a `data:image/x-turnspec-probe;base64,...` image_url", takes="PNG, JPEG, WEBP, GIF"
            ),
        ),
        ("ai-sdk:openai-chat", "TC202"): Known("library bug", "the same image reaches the wire (TC201)"),
        ("ai-sdk:openai-chat", "TC203"): Known(
            "library bug",
            "the same blocks marked critical: the thinking vanishes and the request renders, no error (TC201)",
        ),
        ("ai-sdk:openai-chat", "TC404"): Known(
            "library bug",
            f"{_AI_FOREIGN}, then a user turn: both reasoning parts are left out of the assistant message "
            '(`{"role": "assistant", "content": "answer"}`) with no warning (TC201)',
        ),
        ("ai-sdk:openai-chat", "TC502"): Known(
            "library bug", "the same request (TC404): thinking vanishes with no warning, so no §7.3 WARN line"
        ),
        ("ai-sdk:openai-chat", "TC901"): Known(
            "library bug",
            "an image inside a tool result (V3 `content` output) goes out as the tool message's text: the JSON of the "
            'V3 parts themselves (`[{"type":"text","text":"see"},{"type":"image-data","data":"...","mediaType":'
            '"image/png"}]`), the base64 bytes in a string and the package\'s own part names on the wire: no drop, no '
            "warning",
        ),
        ("ai-sdk:openai-chat", "TC902"): Known(
            "library bug", _AI_IS_ERROR.format(how='`{"role": "tool", "content": "boom", ...}`')
        ),
        ("ai-sdk:openai-responses", "TC201"): Known(
            "library bug",
            _AI_PROBE_IMAGE.format(where="an `input_image` data URL of that type", takes="PNG, JPEG, WEBP, GIF"),
        ),
        ("ai-sdk:openai-responses", "TC202"): Known("library bug", "the same image reaches the wire (TC201)"),
        ("ai-sdk:openai-responses", "TC203"): Known(
            "library bug", "the same image marked critical: the request renders, no error (TC201)"
        ),
        ("ai-sdk:openai-responses", "TC606"): Known(
            "library bug",
            "text.yaml#3: a message item with two `output_text` content parts is read as two V3 text parts by "
            "doGenerate but streamed as one (the stream's text id is the item id, `content_index` is not read), so "
            'the stream says "...short Japanese poem.It has three lines..." where the parse has two texts',
        ),
        ("ai-sdk:openai-responses", "TC902"): Known(
            "library bug", _AI_IS_ERROR.format(how='a `function_call_output` whose `output` is "boom"')
        ),
        ("ai-sdk:openai-responses", "TC907"): Known(
            "library bug",
            "stops.yaml#4/#5 (a stream that fails at its first event after `response.created`): doStream reads the "
            "first parts itself and rejects with an APICallError, so the `response-metadata` naming the serving model "
            "(gpt-5-2025-08-07) never reaches the caller, and the stream can only be opened with the requested model",
        ),
        ("ai-sdk:gemini", "TC201"): Known(
            "library bug",
            _AI_PROBE_IMAGE.format(where="`inlineData` with that `mimeType`", takes="PNG, JPEG, WEBP, HEIC, HEIF"),
        ),
        ("ai-sdk:gemini", "TC202"): Known("library bug", "the same image reaches the wire (TC201)"),
        ("ai-sdk:gemini", "TC203"): Known(
            "library bug", "the same image marked critical: the request renders, no error (TC201)"
        ),
        ("ai-sdk:gemini", "TC401"): Known(
            "library bug",
            'replaying a tool result: `functionResponse.response` is `{"name": "read_file", "content": '
            '"MARK-result-1"}`, so the result\'s text reads back as JSON around it (the docs: \'Use "output" key to '
            'specify function output and "error" key to specify error details\', else the whole object is the output)',
        ),
        ("ai-sdk:gemini", "TC404"): Known(
            "library bug",
            f"{_AI_FOREIGN}, then a user turn: the thinking goes out as a `thought: true` part and the redacted "
            "thinking vanishes, neither with a warning",
        ),
        ("ai-sdk:gemini", "TC606"): Known(
            "library bug",
            'thinking.yaml#7/#8: a signature-only part after the text (`{"text": "", "thoughtSignature": ...}`) is '
            "moved onto the text part before it by doGenerate (`providerMetadata` of the previous content), while the "
            "stream sends it as an empty text delta after that text: the parse reads the signature before the text, "
            "the stream after it",
        ),
        ("ai-sdk:gemini", "TC802"): Known(
            "library bug",
            'a tool result goes back as `functionResponse.response: {"name": ..., "content": ...}`, where the '
            'recording has `{"output": ...}` (the same as TC401), and an error result without its `error` key (TC902)',
        ),
        ("ai-sdk:gemini", "TC901"): Known(
            "library bug",
            "an image inside a tool result goes out as an `inlineData` part after the `functionResponse`, followed by "
            'a text part the history never had ("Tool executed successfully and returned this image as a response")',
        ),
        ("ai-sdk:gemini", "TC902"): Known(
            "library bug",
            _AI_IS_ERROR.format(how='`functionResponse.response: {"name": ..., "content": "boom"}`, no `error` key'),
        ),
        ("ai-sdk:gemini", "TC907"): Known(
            "library bug",
            "the served model: @ai-sdk/google puts no `modelId` in the response metadata of generateContent (the "
            "response's `modelVersion` is not read), so a parsed or streamed message can only name the requested model",
        ),
        ("ai-sdk:bedrock", "TC104"): Known(
            "library bug",
            "redacted thinking (V3 reasoning with `redactedData`) goes out as `reasoningContent.redactedReasoning: "
            '{"data": ...}`; the Converse API\'s ReasoningContentBlock is `reasoningText` or `redactedContent`',
        ),
        ("ai-sdk:bedrock", "TC201"): Known(
            "library bug",
            "an image of media type `image/x-turnspec-probe`, or by URL (Converse takes no image URLs), makes "
            "@ai-sdk/amazon-bedrock refuse the whole request (UnsupportedFunctionalityError) instead of dropping the "
            "block: canonical §4.2.2's default is drop and log, failing is for a block marked critical",
        ),
        ("ai-sdk:bedrock", "TC404"): Known(
            "library bug",
            f"{_AI_FOREIGN}, then a user turn: both reasoning parts are left out of the assistant message with no "
            "warning",
        ),
        ("ai-sdk:bedrock", "TC405"): Known(
            "library bug", "Bedrock's own redacted thinking does not go back as `redactedContent` (TC104)"
        ),
        ("ai-sdk:bedrock", "TC501"): Known(
            "library bug", "the same redacted thinking: not in the field Converse carries it in (TC104)"
        ),
        ("ai-sdk:bedrock", "TC801"): Known(
            "library bug",
            "errors.yaml#9 (a `throttlingException` frame mid-stream): the `error` part is the exception's payload "
            'alone (`{"message": "Too many tokens, please wait before trying again."}`), without which exception it '
            "was, so it cannot be classified as rate_limit",
        ),
        ("ai-sdk:bedrock", "TC802"): Known(
            "library bug",
            'a toolResult goes out without its `status`: a recorded `"success"` is left out, and an error result goes '
            "as a success (TC902)",
        ),
        ("ai-sdk:bedrock", "TC902"): Known("library bug", _AI_IS_ERROR.format(how="a `toolResult` with no `status`")),
    }
)


TRIAGED = tuple(cls.name for cls in BRIDGES.values())
"""Bridges whose every failure must be classified (the session fails otherwise); the others'
unclassified failures are listed as not yet triaged."""


def _cell(result: runner.RuleResult | None) -> str:
    if result is None:
        return "-"
    return f"{result.status} ({result.passed}/{result.passed + result.failed})"


def render() -> tuple[str, int]:
    """The Markdown table and the number of unclassified failures."""
    names = [cls.name for cls in BRIDGES.values()]
    report = runner.run(runner.SuiteConfig.for_refs(names, samples=None, peers=True))
    made_with = ", ".join(f"{lib} {v}" for lib, v in versions().items())
    lines = [
        "# Bridges: library model classes under `turnspec conform`",
        "",
        "The `ai-sdk:<api>` columns are the Vercel AI SDK's providers (a Node program under the exec host; their",
        "packages installed with `turnspec ai-sdk install`, see [the AI SDK bridge](ai-sdk.md)).",
        "",
        f"Generated by `nox -s bridges_table` with {made_with}. Each cell is the check's",
        "status (cases passed / cases run). Skips include the bridges' declared gaps (`bridge_gaps`,",
        "reported with their reason). Every failure of a triaged bridge ("
        + ", ".join(f"`{t}`" for t in TRIAGED)
        + ") is classified below, and an unclassified one fails the session; the other bridges' failures are",
        "listed as found, not yet triaged.",
        "",
        *(f"{lib} version: {v}" for lib, v in versions().items()),
        "",
        "| check | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    rules = sorted({r.rule for r in report.results if r.adapter in names})
    for rule in rules:
        lines.append(f"| {rule} | " + " | ".join(_cell(report.result(rule, n)) for n in names) + " |")
    lines += ["", "## Failures", "", "| bridge | check | class | evidence |", "|---|---|---|---|"]
    unclassified = 0
    for n in names:
        for r in sorted(report.failed, key=lambda r: r.rule):
            if r.adapter != n:
                continue
            known = KNOWN.get((n, r.rule))
            if known is None:
                unclassified += n in TRIAGED
                first = escaping.md((r.reasons[:1] or [""])[0][:300])  # a reason quotes cassette data
                label = "UNCLASSIFIED" if n in TRIAGED else "not yet triaged"
                lines.append(f"| `{n}` | {r.rule} | {label} | {first} |")
            else:
                evidence = known.evidence.replace("|", "\\|")
                lines.append(f"| `{n}` | {r.rule} | {known.kind} | {evidence} |")
    lines += [
        "",
        "## Declared gaps (reported as skips)",
        "",
        "| bridge | checks | cases | reason |",
        "|---|---|---|---|",
    ]
    for cls in BRIDGES.values():
        for gap in cls.bridge_gaps:
            cases = ", ".join(f"`{p}`" for p in gap.subjects) + (
                " (when the difference is only that)" if gap.when else ""
            )
            lines.append(f"| `{cls.name}` | {', '.join(gap.rules)} | {cases} | {gap.reason.replace('|', '/')} |")
    lines += ["", f"Unclassified failures: {unclassified}", ""]
    return "\n".join(lines), unclassified


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance.bridges.table")
    ap.add_argument("out", type=Path)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text, unclassified = render()
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        if not same:
            print(f"{args.out}: differs from a fresh run (nox -s bridges_table)", file=sys.stderr)
        return 0 if same and not unclassified else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}; unclassified failures: {unclassified}", file=sys.stderr)
    return 1 if unclassified else 0


if __name__ == "__main__":
    raise SystemExit(main())
