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
from typing import TYPE_CHECKING, Any, ClassVar

from ...core.convertkit import ConvertContext, Converter
from ..base import Options
from .reader import looks_like
from .rules import CATALOG, NAME

if TYPE_CHECKING:
    from .checker import PydanticAIRun


# the checker and the converters load when used: `turnspec validate` detects every format
# on each run, and starts this one only on its files
def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import to_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import from_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def __getattr__(name: str) -> Any:
    if name == "PydanticAIRun":  # PEP 562: the checker class, loaded at first use
        from .checker import PydanticAIRun  # function-level: see above

        return PydanticAIRun
    raise AttributeError(name)


class PydanticAIFormat:
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

    def start(self, options: Options) -> PydanticAIRun:
        from .checker import PydanticAIRun  # function-level: loaded when a file of this format is validated

        return PydanticAIRun(options)


__all__ = ["CATALOG", "NAME", "PydanticAIFormat", "PydanticAIRun"]
