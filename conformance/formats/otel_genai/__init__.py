"""otel-genai: what the OpenTelemetry GenAI semantic conventions record of a model call.

The `gen_ai.system_instructions`, `gen_ai.input.messages` and `gen_ai.output.messages`
attributes, each following its JSON schema (open-telemetry/semantic-conventions
`docs/gen-ai/gen-ai-{input,output}-messages.json`, `gen-ai-system-instructions.json`):
ChatMessages `{role, parts, name?}` (output messages add `finish_reason`), parts tagged
by `type` (`text`, `reasoning`, `tool_call`, `tool_call_response`, `blob`, `file`, `uri`,
...). Accepted files (`reader`): a `.json` record, or a `.jsonl` of one record per line; a
record is an object of those attributes (arrays, or the JSON text of arrays, as spans
may hold them) or a bare array of ChatMessages.

The converters work on the JSON alone: no OpenTelemetry package is a dependency (the tests
build opentelemetry-util-genai's message types from what they write, where it is installed).

Detection: with `--format otel-genai` (standard input too), or when the record is
unambiguous (`reader.looks_like`: an object with a gen_ai message attribute, or an array
whose every message has a role and typed parts of the schemas). A `.json` longer than
`convertkit.PEEK_BYTES` needs `--format`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...core.convertkit import ConvertContext, Converter
from ..base import Options
from .reader import looks_like
from .rules import CATALOG, NAME

if TYPE_CHECKING:
    from .checker import OtelGenAIRun


# the checker and the converters load when used: `turnspec validate` detects every format
# on each run, and starts this one only on its files
def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import to_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import from_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def __getattr__(name: str) -> Any:
    if name == "OtelGenAIRun":  # PEP 562: the checker class, loaded at first use
        from .checker import OtelGenAIRun  # function-level: see above

        return OtelGenAIRun
    raise AttributeError(name)


class OtelGenAIFormat:
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

    def start(self, options: Options) -> OtelGenAIRun:
        from .checker import OtelGenAIRun  # function-level: loaded when a file of this format is validated

        return OtelGenAIRun(options)


__all__ = ["CATALOG", "NAME", "OtelGenAIFormat", "OtelGenAIRun"]
