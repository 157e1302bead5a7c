"""Provider adapters: the contract (base), the reference adapters and their discovery."""

from __future__ import annotations

from .anthropic import AnthropicAdapter
from .base import (
    Adapter,
    AdapterError,
    AdapterOptions,
    BaseAdapter,
    CriticalBlockError,
    ParsedRequest,
    RequestContext,
    ToolIdMap,
    WireRequest,
    WireResponse,
)
from .openai_chat import OpenAIChatAdapter
from .registry import available, load

__all__ = [
    "Adapter",
    "AdapterError",
    "AdapterOptions",
    "AnthropicAdapter",
    "BaseAdapter",
    "CriticalBlockError",
    "OpenAIChatAdapter",
    "ParsedRequest",
    "RequestContext",
    "ToolIdMap",
    "WireRequest",
    "WireResponse",
    "available",
    "load",
]
