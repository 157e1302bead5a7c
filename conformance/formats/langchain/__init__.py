"""langchain: lists of LangChain messages in their JSON form.

What `langchain_core.messages.messages_to_dict(messages)` writes and `messages_from_dict`
reads: an array of `{"type": "human" | "ai" | "system" | "tool" | ..., "data": {...}}`,
`data` being the message's fields (`content`: a string or a list of standard content
blocks `text`, `reasoning`, `image`, `tool_call`, ...; `tool_calls` with `id`, `name`,
`args`; `ToolMessage.tool_call_id` and `status`; `response_metadata`, `usage_metadata`);
or what `langchain_core.load.dumpd` writes per message (`{"lc": 1, "type":
"constructor", "id": [..., "AIMessage"], "kwargs": {...}}`). Accepted files (`reader`): a
`.json` array (one conversation), or a `.jsonl` of one array per line.

The converters work on the JSON alone: langchain-core is not a dependency (the tests use
its own types where it is installed).

Detection: with `--format langchain` (standard input too), or when the array is
unambiguous (`reader.looks_like`: non-empty, every element a message dict of either
form). A `.json` longer than `convertkit.PEEK_BYTES` needs `--format`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...core.convertkit import ConvertContext, Converter
from ..base import Options
from .reader import looks_like
from .rules import CATALOG, NAME

if TYPE_CHECKING:
    from .checker import LangChainRun


# the checker and the converters load when used: `turnspec validate` detects every format
# on each run, and starts this one only on its files
def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import to_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import from_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def __getattr__(name: str) -> Any:
    if name == "LangChainRun":  # PEP 562: the checker class, loaded at first use
        from .checker import LangChainRun  # function-level: see above

        return LangChainRun
    raise AttributeError(name)


class LangChainFormat:
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

    def start(self, options: Options) -> LangChainRun:
        from .checker import LangChainRun  # function-level: loaded when a file of this format is validated

        return LangChainRun(options)


__all__ = ["CATALOG", "NAME", "LangChainFormat", "LangChainRun"]
