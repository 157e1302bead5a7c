"""Bridges: a library's own model classes run as turnspec adapters (issue 28).

`kit` is the bridge kit (capture transport, async-to-sync, declared gaps); `pydantic_ai`
ships the pydantic-ai bridges (`turnspec conform pydantic-ai:anthropic`, `:openai-chat`,
`:openai-responses`, `:gemini`; `pip install 'turnspec[pydantic-ai]'`); `langchain` ships the
LangChain bridges (`turnspec conform langchain:anthropic`, `:openai-chat`;
`pip install 'turnspec[langchain-bridges]'`); `ai_sdk` runs the Vercel AI SDK's providers in a Node
program under the exec host (`turnspec conform ai-sdk:anthropic`, `:openai-chat`, `:openai-responses`,
`:gemini`, `:bedrock`; `turnspec ai-sdk install`).

Nothing in turnspec imports this package except `adapters.registry`, which resolves the
`pydantic-ai:<api>`, `langchain:<api>` and `ai-sdk:<api>` names lazily (`.importlinter` states
it), so turnspec never needs the libraries it bridges.
"""

from __future__ import annotations

from .kit import Canned, Captured, CapturedRequest, CaptureTransport, Gap, run_sync

__all__ = ["Canned", "CaptureTransport", "Captured", "CapturedRequest", "Gap", "run_sync"]
