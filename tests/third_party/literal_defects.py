"""Defective variants of the spec-literal adapter: each plants one bug a check exists for,
so the tests show the suite's fixes for honest spec-literal choices let no defect through."""

from __future__ import annotations

from typing import Any

from literal_openai_chat import LiteralOpenAIChatAdapter  # a sibling module: `turnspec conform` loads this file by path

from conformance.adapters.errors import AdapterError
from conformance.adapters.protocol import AdapterOptions, Message, RequestContext, ToolDefinition, WireRequest


class SystemLastLiteral(LiteralOpenAIChatAdapter):
    """Places the system message last: contract §4.1.2 wants it first in `messages`."""

    name = "literal-system-last"

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        wire = list(req.body["messages"])
        if wire and wire[0].get("role") == "system" and len(wire) > 1:
            wire.append(wire.pop(0))
        return WireRequest(req.method, req.path, req.headers, {**req.body, "messages": wire})


class LostRequestIdLiteral(LiteralOpenAIChatAdapter):
    """Raises errors without the request id: contract §6.3 `request_id`."""

    name = "literal-lost-request-id"

    def from_wire_response(self, response: Any, request_context: RequestContext) -> Message:
        try:
            return super().from_wire_response(response, request_context)
        except AdapterError as exc:
            exc.request_id = "req_not_the_one"
            raise
