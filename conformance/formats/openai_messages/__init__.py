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
from typing import TYPE_CHECKING, Any, ClassVar

from ...core.convertkit import ConvertContext, Converter
from ..base import Options
from .reader import looks_like
from .rules import CATALOG, NAME

if TYPE_CHECKING:
    from .checker import OpenAIMessagesRun


# the checker and the converters load when used: `turnspec validate` detects every format
# on each run, and starts this one only on its files
def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import to_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import from_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def __getattr__(name: str) -> Any:
    if name == "OpenAIMessagesRun":  # PEP 562: the checker class, loaded at first use
        from .checker import OpenAIMessagesRun  # function-level: see above

        return OpenAIMessagesRun
    raise AttributeError(name)


class OpenAIMessagesFormat:
    name = NAME
    rules = CATALOG
    schema_family = None
    migrations = False
    converters: ClassVar[dict[tuple[str, str], Converter]] = {
        (NAME, "canonical"): to_canonical,
        ("canonical", NAME): from_canonical,
    }

    def detect(self, path: Path) -> bool:
        return looks_like(path)

    def start(self, options: Options) -> OpenAIMessagesRun:
        from .checker import OpenAIMessagesRun  # function-level: loaded when a file of this format is validated

        return OpenAIMessagesRun(options)


__all__ = ["CATALOG", "NAME", "OpenAIMessagesFormat", "OpenAIMessagesRun"]
