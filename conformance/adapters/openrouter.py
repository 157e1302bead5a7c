"""OpenRouter's Chat Completions with reasoning: an opt-in variant of the openai-chat adapter.

Not registered by default (the five reference adapters speak the providers' own APIs);
use it as `conformance.adapters.openrouter:OpenRouterChatAdapter` (for example `turnspec
conform conformance.adapters.openrouter:OpenRouterChatAdapter`, whose own cassettes are
`cassettes/openrouter/`). Everything but reasoning is the openai-chat adapter's; the wire
facts are the record `conformance.wire.openrouter.OPENROUTER_CHAT`, written from
OpenRouter's docs:

- https://openrouter.ai/docs/guides/best-practices/reasoning-tokens ("Reasoning Tokens":
  the `reasoning` string, the `reasoning_details` array and its three types, "Preserving
  reasoning blocks": send `reasoning_details` back unmodified, in order; streamed as
  `delta.reasoning` / `delta.reasoning_details`)
- https://openrouter.ai/docs/agent-sdk/typescript/api-reference/models/reasoningdetailunion
  (`reasoning.text` {text, signature}, `reasoning.summary` {summary}, `reasoning.encrypted`
  {data}; each with optional id, format, index)

Mapping (canonical <-> wire), in both response parse, stream and request read-back:

- `reasoning_details` entries, in order, before the text and tool calls of the message:
  `reasoning.text` -> thinking `{text, signature}`; `reasoning.summary` -> thinking with the
  summary as text and no signature; `reasoning.encrypted` -> redacted_thinking `{data}`.
  Each entry's other fields (`id`, `format`, `index`, and which of the three types a
  thinking block came from) ride in `metadata.provider_raw["openrouter"]["reasoning"]`,
  so the entries go back as they came. A message with only the `reasoning` string (no
  details, as some OpenAI-compatible servers send) reads as one unsigned thinking block.
- Thinking and redacted thinking go back as `reasoning_details` only on messages this
  adapter's provider issued (`metadata.provider == "openrouter"`): another provider's
  signatures and encrypted reasoning are dropped with the §7.3 WARN line (spec §6.5).
- Streams: each detail index becomes one block; text and summary pieces are
  `thinking_delta`s and the block's signature rides on its final delta (streaming §5.3),
  emitted when the next block starts or the message ends. An encrypted entry becomes a
  redacted_thinking block (it has no delta event). A streamed message keeps no
  `provider_raw`, so the per-entry `id`/`format`/`index` of a streamed answer are not kept
  (they are for a non-streamed one).
- A stream's error (https://openrouter.ai/docs/api-reference/streaming, "Handling Errors
  During Streaming"): a chunk with a top-level `error` beside a choice whose finish_reason
  is `error`, classified by the HTTP status its `error.code` names (else as a server error),
  raised after `message_complete` with `stop_reason: error` (contract §6.5).
- Usage, stop reasons, tools, images, refusals: as the openai-chat adapter (contract §7.2
  there).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from .base import AdapterError, Block, Message, ParsedRequest, RequestContext, StreamEvent, WireBody, WireResponse
from .openai_chat import OpenAIChatAdapter, _ChatStream, refusal_at

REASONING_KEYS = ("reasoning", "reasoning_details")
_PAYLOAD = ("text", "summary", "data", "signature")


class OpenRouterChatAdapter(OpenAIChatAdapter):
    """Canonical <-> OpenRouter `POST /api/v1/chat/completions`, reasoning included."""

    name: ClassVar[str] = "openrouter"
    provider: ClassVar[str] = "openrouter"
    wire_api: ClassVar[str] = "openrouter-chat-completions"
    # tool call ids are the upstream provider's, passed through (toolu_..., call_...)
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^\S{1,128}$")
    capabilities: ClassVar[Mapping[str, Any]] = {**OpenAIChatAdapter.capabilities, "supports_thinking": True}

    # -- canonical -> wire ---------------------------------------------------------------

    def assistant_to_wire(self, message: Message) -> list[WireBody]:
        texts: list[str] = []
        calls: list[WireBody] = []
        details: list[dict[str, Any]] = []
        sid = str(message.get("session_id", ""))
        raw = self.own_raw(message)
        stored = raw.get("reasoning")
        info: dict[str, Any] = stored if isinstance(stored, dict) else {}
        kept: list[Any] = list(info.get("details") or [])
        foreign = (message.get("metadata") or {}).get("provider") != self.provider
        at = refusal_at(raw)
        refusal: str | None = None
        for i, b in enumerate(message.get("content", [])):
            t = b.get("type")
            if t == "text" and i == at:
                refusal = b["text"]  # the reply's `refusal`, read as text: back in its field
            elif t == "text":
                texts.append(b["text"])
            elif t == "tool_use":
                calls.append(self.tool_call_to_wire(sid, b))
            elif t in ("thinking", "redacted_thinking"):
                if foreign:
                    who = (message.get("metadata") or {}).get("provider") or "an unknown provider"
                    self.drop(
                        message, i, str(t), f"{t} issued by {who}; reasoning_details go back only to their issuer"
                    )
                    continue
                extra = kept[len(details)] if len(details) < len(kept) and isinstance(kept[len(details)], dict) else {}
                details.append(_detail_to_wire(b, extra))
            else:
                self.drop(message, i, str(t), f"no Chat Completions equivalent for a {t} block in an assistant message")
        if not texts and not calls and not details and refusal is None:
            return []
        wire: WireBody = {"role": "assistant"}
        if len(texts) > 1:
            wire["content"] = [{"type": "text", "text": t} for t in texts]
        else:
            wire["content"] = texts[0] if texts else None
        if refusal is not None:
            wire["refusal"] = refusal
        if calls:
            wire["tool_calls"] = calls
        fields = info.get("fields") if isinstance(info.get("fields"), dict) else None
        if details or fields:
            for key in fields or {"reasoning_details": True}:
                if key == "reasoning":
                    given = (fields or {}).get("reasoning", True)
                    wire["reasoning"] = _joined(details) if given is True else given
                elif key == "reasoning_details":
                    wire["reasoning_details"] = details
        wire.update(raw.get("message", {}))
        return [wire]

    # -- wire -> canonical ---------------------------------------------------------------

    def content_from_wire(self, session_id: str, msg: Mapping[str, Any], *, reasoning: bool = True) -> list[Block]:
        """Reasoning is read in requests too: it goes back to OpenRouter ("Preserving
        reasoning blocks")."""
        return super().content_from_wire(session_id, msg, reasoning=True)

    def reasoning_from_wire(self, msg: Mapping[str, Any]) -> list[Block]:
        """`reasoning_details` (else the `reasoning` string), else what the openai-chat
        adapter reads (`reasoning_content`)."""
        return reasoning_blocks(msg) or super().reasoning_from_wire(msg)

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        m = super().from_wire_response(response, request_context)
        body = response.body if isinstance(response, WireResponse) else response
        msg = ((body.get("choices") or [{}])[0] or {}).get("message") or {}
        self._keep_reasoning_raw(m, msg)
        return m

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        parsed = super().from_wire_request(body, session_id=session_id)
        wire = [wm for wm in body.get("messages", []) if isinstance(wm, dict) and wm.get("role") == "assistant"]
        canon = [m for m in parsed.messages if m.get("role") == "assistant"]
        for m, wm in zip(canon, wire, strict=False):
            self._keep_reasoning_raw(m, wm)
        return parsed

    def _keep_reasoning_raw(self, m: Message, msg: Mapping[str, Any]) -> None:
        """Move the reasoning fields out of the verbatim message extras into `reasoning`:
        which fields the message had, the `reasoning` string when it is not the joined
        texts, and each detail's fields other than its payload."""
        meta = m.setdefault("metadata", {})
        raw_all = meta.setdefault("provider_raw", {})
        raw = raw_all.setdefault(self.name, {})
        extras = raw.get("message")
        if isinstance(extras, dict):
            for key in REASONING_KEYS:
                extras.pop(key, None)
            if not extras:
                raw.pop("message")
        fields: dict[str, Any] = {}
        blocks = reasoning_blocks(msg)
        if "reasoning" in msg:
            given = msg["reasoning"]
            derived = _joined([_detail_to_wire(b, {}) for b in blocks])
            fields["reasoning"] = True if given == derived and given else given
        details = msg.get("reasoning_details")
        if "reasoning_details" in msg:
            fields["reasoning_details"] = True
        info: dict[str, Any] = {}
        if fields and fields != {"reasoning_details": True}:
            info["fields"] = fields
        if isinstance(details, list):
            kept = [{k: v for k, v in d.items() if k not in _PAYLOAD} for d in details if isinstance(d, dict)]
            if any(k != {"type": "reasoning.text"} for k in kept) or details == []:
                info["details"] = kept
                info.setdefault("fields", fields)
        if info:
            raw["reasoning"] = info
        if not raw:
            raw_all.pop(self.name)
        if not raw_all:
            meta.pop("provider_raw")

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """The openai-chat stream plus `delta.reasoning_details` / `delta.reasoning`."""
        st = _RouterStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)


def reasoning_blocks(msg: Mapping[str, Any]) -> list[Block]:
    """Canonical blocks of a message's `reasoning_details` (else of its `reasoning` string)."""
    details = msg.get("reasoning_details")
    out: list[Block] = []
    if isinstance(details, list) and details:
        for d in details:
            if not isinstance(d, dict):
                continue
            t = d.get("type")
            if t == "reasoning.encrypted":
                out.append({"type": "redacted_thinking", "data": str(d.get("data", ""))})
            elif t == "reasoning.summary":
                out.append({"type": "thinking", "text": str(d.get("summary") or ""), "signature": None})
            else:  # reasoning.text, and any newer text-like type
                out.append(
                    {"type": "thinking", "text": str(d.get("text") or ""), "signature": d.get("signature") or None}
                )
        return out
    text = msg.get("reasoning")
    if isinstance(text, str) and text:
        out.append({"type": "thinking", "text": text, "signature": None})
    return out


def _detail_to_wire(block: Block, extra: Mapping[str, Any]) -> dict[str, Any]:
    kind = extra.get("type") or ("reasoning.encrypted" if block["type"] == "redacted_thinking" else "reasoning.text")
    out: dict[str, Any] = {"type": kind}
    if kind == "reasoning.encrypted":
        out["data"] = block.get("data", "")
    elif kind == "reasoning.summary":
        out["summary"] = block.get("text", "")
    else:
        out["text"] = block.get("text", "")
        if block.get("signature"):
            out["signature"] = block["signature"]
    out.update({k: v for k, v in extra.items() if k != "type"})
    return out


def _joined(details: list[dict[str, Any]]) -> str:
    return "".join(str(d.get("text") or d.get("summary") or "") for d in details if d["type"] != "reasoning.encrypted")


class _RouterStream(_ChatStream):
    """One OpenRouter stream: reasoning entries first become thinking / redacted blocks."""

    def __init__(self, adapter: OpenRouterChatAdapter, ctx: RequestContext) -> None:
        super().__init__(adapter, ctx)
        self.reasoning_at: dict[Any, int] = {}  # detail index -> canonical block index
        self.open_reasoning: int | None = None

    def error_in(self, obj: Mapping[str, Any]) -> AdapterError | None:
        """A chunk with an `error` object, its `choices` (finish_reason `error`) beside it or not
        (streaming, "Handling Errors During Streaming": the unified error chunk), classified by
        the HTTP status its `error.code` names ("Errors": "The HTTP Response will have the same
        status code as error.code"), else as a server error: the stream began with a 200."""
        err = obj.get("error")
        if not isinstance(err, dict):
            return super().error_in(obj)
        code = err.get("code")
        status = code if type(code) is int and 400 <= code <= 599 else 500
        return self.adapter.classify_error(status, obj)

    def reasoning(self, delta: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """`delta.reasoning_details` entries, else the `reasoning` string, else what the
        openai-chat stream reads (`reasoning_content`)."""
        details = delta.get("reasoning_details")
        if isinstance(details, list) and details:
            for d in details:
                if isinstance(d, dict):
                    yield from self.detail(d)
        elif isinstance(delta.get("reasoning"), str) and delta["reasoning"]:
            yield from self.detail({"type": "reasoning.text", "text": delta["reasoning"], "index": "plain"})
        else:
            yield from super().reasoning(delta)

    def detail(self, d: dict[str, Any]) -> Iterator[StreamEvent]:
        key = d.get("index", len(self.reasoning_at))
        k = self.reasoning_at.get(key)
        if k is None:
            yield from self.end_call()
            k = self.reasoning_at[key] = len(self.content)
            if d.get("type") == "reasoning.encrypted":
                self.content.append({"type": "redacted_thinking", "data": str(d.get("data", ""))})
                return
            self.content.append({"type": "thinking", "text": "", "signature": None})
            self.open_reasoning = k
        block = self.content[k]
        if block["type"] != "thinking":
            return
        piece = d.get("summary") if d.get("type") == "reasoning.summary" else d.get("text")
        if isinstance(piece, str) and piece:
            block["text"] += piece
            yield {
                "type": "thinking_delta",
                "message_id": self.mid,
                "content_block_index": k,
                "text": piece,
                "signature": None,
            }
        if isinstance(d.get("signature"), str) and d["signature"]:
            block["signature"] = d["signature"]

    def end_call(self) -> Iterator[StreamEvent]:
        k = self.open_reasoning
        if k is not None:
            self.open_reasoning = None
            # the signature rides only on the block's final delta (streaming-protocol §5.3)
            yield {
                "type": "thinking_delta",
                "message_id": self.mid,
                "content_block_index": k,
                "text": "",
                "signature": self.content[k].get("signature"),
            }
        yield from super().end_call()
