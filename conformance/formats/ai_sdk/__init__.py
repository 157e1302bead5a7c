"""ai-sdk: the Vercel AI SDK's stored `UIMessage[]` conversations, as JSON.

What `useChat` holds and an app persists (the AI SDK's "Chatbot Message Persistence"
guide: `saveChat` writes `JSON.stringify(messages, null, 2)`, `loadChat` reads it back and
the server checks it with `validateUIMessages`): an array of `{id, role, metadata?, parts}`
whose parts are `text`, `reasoning`, `tool-<name>` / `dynamic-tool` (by `state`),
`source-url`, `source-document`, `file`, `step-start` and `data-<name>`. Accepted files
(`reader`): a `.json` array (one conversation), or a `.jsonl` of one array per line.
A conversation of `ModelMessage`s instead (`convertToModelMessages` output, `{role,
content}`: `model_checks`, `model_mapping`) is read too; converting to ai-sdk writes
UIMessages.

The converters work on the JSON alone: node and the `ai` package are not needed (the
tests run `validateUIMessages` as the oracle when they are installed).

Detection: with `--format ai-sdk`, or when the array is unambiguous (`reader.looks_like`:
non-empty, every element has a string `id`, role system/user/assistant and `parts` of AI
SDK part types). A `.json` longer than `reader.PEEK_BYTES` needs `--format`.
"""

from __future__ import annotations

from pathlib import Path

from ..base import PeerFormat
from .reader import looks_like
from .rules import CATALOG, NAME


class AISDKFormat(PeerFormat):
    name = NAME
    rules = CATALOG
    run_class = "AISDKRun"  # checker.py; it and convert.py load when used (`base.PeerFormat`)

    def detect(self, path: Path) -> bool:
        return looks_like(path)


__all__ = ["CATALOG", "NAME", "AISDKFormat"]
