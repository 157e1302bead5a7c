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

from ..base import PeerFormat
from .reader import looks_like
from .rules import CATALOG, NAME


class LangChainFormat(PeerFormat):
    name = NAME
    rules = CATALOG
    run_class = "LangChainRun"  # checker.py; it and convert.py load when used (`base.PeerFormat`)

    def detect(self, path: Path) -> bool:
        return looks_like(path)


__all__ = ["CATALOG", "NAME", "LangChainFormat"]
