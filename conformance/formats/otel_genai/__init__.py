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

from ..base import PeerFormat
from .reader import looks_like
from .rules import CATALOG, NAME


class OtelGenAIFormat(PeerFormat):
    name = NAME
    rules = CATALOG
    run_class = "OtelGenAIRun"  # checker.py; it and convert.py load when used (`base.PeerFormat`)

    def detect(self, path: Path) -> bool:
        return looks_like(path)


__all__ = ["CATALOG", "NAME", "OtelGenAIFormat"]
