"""openai-messages: the OpenAI Chat Completions `messages` array, as gateways store it.

LiteLLM (spend logs, `messages` column), OpenRouter/vLLM/Ollama request logs, and
fine-tuning or batch files keep conversations as Chat messages: `{"role": "system" |
"developer" | "user" | "assistant" | "tool", "content": str | [parts], "tool_calls",
"tool_call_id", "name"}`. Accepted files (`reader`): a `.json` array of messages or one
`{"messages": [...]}` object; a `.jsonl` of one message per line, or of one
`{"messages": [...]}` conversation per line.

Assistant `reasoning_content` (DeepSeek, vLLM) and `reasoning` (Ollama, OpenRouter)
are read as thinking blocks; canonical thinking is written as `reasoning_content`.

Detection: with `--format openai-messages`, or when the first message is unmistakably a
Chat message (`reader.looks_like`: string or null content, `tool_calls`,
`tool_call_id` or the developer role, and no canonical key). Needs `--format`: a file
whose first message's content is an array of parts (a broken canonical file looks the
same, and so does a gpt2099 context window, whose contents are arrays), and a
`{"messages": [...]}` with a `model` key (a provider request body, which a directory walk
skips). Detection asks this format before gpt2099: a Chat message with a string content
is never a valid gpt2099 context window.
"""

from __future__ import annotations

from pathlib import Path

from ..base import PeerFormat
from .reader import looks_like
from .rules import CATALOG, NAME


class OpenAIMessagesFormat(PeerFormat):
    name = NAME
    rules = CATALOG
    run_class = "OpenAIMessagesRun"  # checker.py; it and convert.py load when used (`base.PeerFormat`)

    def detect(self, path: Path) -> bool:
        return looks_like(path)


__all__ = ["CATALOG", "NAME", "OpenAIMessagesFormat"]
