"""pydantic-ai: lists of pydantic-ai `ModelMessage`s in their JSON form.

What `ModelMessagesTypeAdapter.dump_json(messages)` writes and `validate_json` reads
(pydantic-ai's "Messages and chat history" guide): an array of `ModelRequest`s
(`kind: "request"`, `parts`: system-prompt, user-prompt, tool-return, retry-prompt, ...)
and `ModelResponse`s (`kind: "response"`, `parts`: text, tool-call, thinking, ...;
`model_name`, `provider_name`, `usage`, `timestamp`, ...), each part tagged by
`part_kind`. Accepted files (`reader`): a `.json` array (one history), or a `.jsonl` of
one array per line.

The converters work on the JSON alone: pydantic-ai is not a dependency.

Detection: with `--format pydantic-ai`, or when the array is unambiguous
(`reader.looks_like`: non-empty, and every element has `kind` request or response and
`parts`). A `.json` longer than `reader.PEEK_BYTES` needs `--format`.
"""

from __future__ import annotations

from pathlib import Path

from ..base import PeerFormat
from .reader import looks_like
from .rules import CATALOG, NAME


class PydanticAIFormat(PeerFormat):
    name = NAME
    rules = CATALOG
    run_class = "PydanticAIRun"  # checker.py; it and convert.py load when used (`base.PeerFormat`)

    def detect(self, path: Path) -> bool:
        return looks_like(path)


__all__ = ["CATALOG", "NAME", "PydanticAIFormat"]
