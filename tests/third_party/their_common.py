"""Plumbing shared by the two honest third-party adapters (`their_anthropic`,
`their_openai_chat`), written from the metis contract and the providers' documentation
without reading turnspec's reference adapters (issue 25).

- `sse_frames`: a Server-Sent Events reader after the WHATWG HTML "server-sent events"
  section (lines end in CRLF, LF or CR; an event is dispatched at a blank line; an event
  cut off by the end of the stream is not dispatched), failing with a located
  `WireFormatError` rather than a traceback.
- `finish_message`: the canonical assistant message a session manager would store after
  the call (adapter contract §3.3: the adapter knows content, model, provider and token
  counts; routing, cost and ids are the core's). Cost is the price table's exact value,
  never rounded (canonical spec §6.4).
"""

from __future__ import annotations

import codecs
import datetime as dt
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ulid import ULID

from conformance.adapters.errors import AdapterError, WireFormatError
from conformance.adapters.estimate import json_tokens, openai_image_tokens, text_tokens
from conformance.adapters.protocol import Block, Message, RequestContext, StreamEvent


@dataclass(frozen=True)
class Frame:
    """One dispatched SSE event: its 0-based position, the 1-based line it started on,
    its `event:` name ("" when none) and its joined `data:` lines."""

    index: int
    line: int
    event: str
    data: str


def sse_frames(chunks: Iterable[bytes | str]) -> Iterator[Frame]:
    """Dispatch the SSE events of a byte (or text) stream split anywhere."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    pending = ""
    line_no = 0
    index = 0
    name = ""
    data: list[str] | None = None
    start = 0

    def lines(text: str, final: bool) -> Iterator[str]:
        nonlocal pending
        pending += text
        while True:
            cut = -1
            for i, ch in enumerate(pending):
                if ch in "\r\n":
                    cut = i
                    break
            if cut < 0:
                break
            if pending[cut] == "\r" and cut + 1 == len(pending) and not final:
                break  # a CR whose LF may come in the next chunk
            end = cut + 2 if pending[cut] == "\r" and pending[cut + 1 : cut + 2] == "\n" else cut + 1
            line, pending = pending[:cut], pending[end:]
            yield line
        if final and pending:
            # a last line without its end of line ends the stream: nothing is dispatched
            # from it (an event needs its blank line), but its field still counts
            line, pending = pending, ""
            yield line

    def feed(text: str, final: bool) -> Iterator[Frame]:
        nonlocal line_no, index, name, data, start
        for line in lines(text, final):
            line_no += 1
            if line == "":
                if data is not None:
                    yield Frame(index, start, name, "\n".join(data))
                    index += 1
                name, data = "", None
                continue
            if line.startswith(":"):
                continue  # a comment (keep-alive)
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                if data is None:
                    data, start = [], line_no
                data.append(value)

    for chunk in chunks:
        if isinstance(chunk, bytes):
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                raise WireFormatError(f"stream is not UTF-8: {exc.reason}", event=index, line=line_no + 1) from None
        else:
            text = chunk
        yield from feed(text, False)
    try:
        tail = decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise WireFormatError(f"stream ends inside a UTF-8 character: {exc.reason}", event=index) from None
    yield from feed(tail, True)


def frame_json(frame: Frame) -> dict[str, Any]:
    """The JSON object an SSE event's data carries; a located error for anything else."""
    try:
        value = json.loads(frame.data)
    except ValueError as exc:
        raise WireFormatError(f"event data is not JSON ({exc})", event=frame.index, line=frame.line) from None
    if not isinstance(value, dict):
        raise WireFormatError("event data is not a JSON object", event=frame.index, line=frame.line)
    return value


def json_object_or_none(text: str) -> dict[str, Any] | None:
    """`text` parsed when it is one JSON object, else None (the empty string is `{}`)."""
    if text.strip() == "":
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def mint_ulid() -> str:
    return str(ULID())


def utc_now() -> str:
    """RFC 3339 UTC with microseconds (canonical spec §4.1)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def token_usage(input_tokens: int, output_tokens: int, cached: int = 0, cache_creation: int = 0) -> dict[str, int]:
    """Adapter contract §3.3 TokenUsage."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_input_tokens": cached,
        "cache_creation_input_tokens": cache_creation,
    }


def finish_message(
    ctx: RequestContext,
    provider: str,
    content: list[Block],
    *,
    served_by: str | None,
    tokens: Mapping[str, int] | None,
    raw: Mapping[str, Any] | None,
    adapter: str,
    status: str = "complete",
) -> Message:
    """The stored assistant message (adapter contract §3.3): the model the response names
    as having served the call, else the requested one; usage priced by the core's table
    when the context carries one (an explicit zero under "unpriced" otherwise)."""
    model = f"{provider}:{served_by}" if served_by else (ctx.model or f"{provider}:unknown")
    usage: dict[str, Any] | None = None
    if tokens is not None:
        usage = {**token_usage(0, 0), **{k: int(v) for k, v in tokens.items()}}
        usage["cost_usd"] = "0"
        usage["pricing_version"] = "unpriced"
        usage["latency_ms"] = ctx.latency_ms
        if ctx.pricing is not None and ctx.pricing_version is not None:
            try:
                cost = ctx.pricing.cost(ctx.pricing_version, model, usage)
            except KeyError:
                pass
            else:
                usage["cost_usd"] = format(cost, "f")
                usage["pricing_version"] = ctx.pricing_version
    meta: dict[str, Any] = {
        "model": model,
        "provider": provider,
        "routing": {"mode": "default", "chosen_model": model, "reason": f"{adapter}: single-model harness"},
        "usage": usage,
        "status": status,
    }
    if raw:
        meta["provider_raw"] = {adapter: dict(raw)}
    return {
        "id": ctx.message_id or mint_ulid(),
        "session_id": ctx.session_id,
        "role": "assistant",
        "content": content or [{"type": "text", "text": ""}],
        "metadata": meta,
        "created_at": ctx.created_at or utc_now(),
        "schema_version": 1,
    }


def plain_message(session_id: str, role: str, content: list[Block], meta: dict[str, Any]) -> Message:
    """A message read back from a wire request: the wire holds no ids or times, so they are
    minted as the core would for a message it never saw (canonical spec §6.1)."""
    return {
        "id": mint_ulid(),
        "session_id": session_id,
        "role": role,
        "content": content,
        "metadata": meta,
        "created_at": utc_now(),
        "schema_version": 1,
    }


def header(headers: Mapping[str, Any], name: str) -> str | None:
    """The first value of header `name` (lower case), whatever the case of its key."""
    for k, v in headers.items():
        if k.lower() == name:
            if isinstance(v, list | tuple):
                return str(v[0]) if v else None
            return str(v)
    return None


def openai_block_tokens(b: Mapping[str, Any]) -> int:
    """A canonical block's estimated tokens as OpenAI's APIs count them."""
    t = b.get("type")
    if t == "text":
        return text_tokens(str(b.get("text", "")))
    if t == "tool_use":
        return json_tokens(b.get("input", {})) + text_tokens(str(b.get("name", ""))) + 5
    if t == "tool_result":
        return 4 + sum(openai_block_tokens(x) for x in b.get("content") or [])
    if t == "image":
        return openai_image_tokens(b)
    return 0


class CanonicalStream:
    """What each adapter's stream state shares: the message id, the content and usage so
    far, and contract §6.5 on a failure after message_start (a last message_complete with
    stop_reason error and the content so far, then the error). A subclass reads the wire
    in `_events` and ends what is open in `end_open_calls`."""

    def __init__(self, ctx: RequestContext) -> None:
        self.mid = ctx.message_id or mint_ulid()
        self.content: list[Block] = []
        self.usage: dict[str, int] | None = None
        self.started = self.completed = False

    def ev(self, kind: str, **kw: Any) -> StreamEvent:
        if kind == "message_complete":
            self.completed = True
        return {"type": kind, "message_id": self.mid, **kw}

    def events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        try:
            yield from self._events(chunks)
        except AdapterError:
            if self.started and not self.completed:
                yield from self.end_open_calls()
                yield self.ev("message_complete", stop_reason="error", final_content=self.content, usage=self.usage)
            raise

    def _events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        raise NotImplementedError

    def end_open_calls(self) -> Iterator[StreamEvent]:
        """Contract §5.2.2 on a failed stream: each open tool call ends; none by default."""
        return iter(())
