"""A third-party-style Ollama adapter that never sends an assistant turn's thinking back:
Ollama's docs make the message object's `thinking` optional on input, so an adapter may
keep thinking out of its requests (it still reads thinking from responses). Each thinking
block it leaves out is dropped with the WARN line of canonical §7.3.

It overrides only the reference adapter's per-message rendering (`message_to_wire`).
`turnspec conform` passes it; TC405 and TC501 skip the thinking it does not send back,
with the reason its wire record (`WireApi.thinking_back`) gives.
"""

from __future__ import annotations

from typing import Any, ClassVar

from conformance.adapters.ollama import OllamaAdapter
from conformance.adapters.protocol import Message


class OllamaNoThinkingBackAdapter(OllamaAdapter):
    """The reference Ollama adapter, leaving thinking out of the history it sends."""

    name: ClassVar[str] = "ollama-no-thinking-back"

    def message_to_wire(self, message: Message, *, with_ids: bool) -> list[dict[str, Any]]:
        if message.get("role") != "assistant":
            return super().message_to_wire(message, with_ids=with_ids)
        kept = []
        for i, b in enumerate(message.get("content", [])):
            if b.get("type") == "thinking":
                self.drop(message, i, "thinking", "thinking is not sent back (Ollama takes it optionally on input)")
            else:
                kept.append(b)
        return super().message_to_wire({**message, "content": kept}, with_ids=with_ids)
