"""The reference adapters' override points: versioned API (docs/public-names.md).

A third party subclasses a reference adapter (`turnspec init adapter` writes such a
subclass) and overrides what its provider does differently. Each public method (no leading
`_`) of `BaseAdapter` and of the reference adapter classes (`REFERENCE_CLASSES`) is an
override point: its name and signature change only compatibly, and
`tests/test_public_names.py` fails when one changes unnoticed. A parameter a later release
adds to an override point is optional, and the reference code passes it through `call`,
so a subclass still overriding the method with the earlier signature keeps working (with a
DeprecationWarning naming the parameter). The stream classes (`_ChatStream`, ...) are
private; their `complete` is still called through `call` (`final` came later).
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .protocol import accepts_keyword

T = TypeVar("T")

REFERENCE_CLASSES: tuple[str, ...] = (
    "conformance.adapters.base:BaseAdapter",
    "conformance.adapters.anthropic:AnthropicAdapter",
    "conformance.adapters.openai_chat:OpenAIChatAdapter",
    "conformance.adapters.openai_responses:OpenAIResponsesAdapter",
    "conformance.adapters.gemini:GeminiAdapter",
    "conformance.adapters.ollama:OllamaAdapter",
    "conformance.adapters.bedrock:BedrockAdapter",
)
"""The classes whose public methods are override points (`module:Class`)."""

_WARNED: set[tuple[str, str]] = set()


def call(method: Callable[..., T], *args: Any, **added: Any) -> T:
    """`method(*args, **added)`, leaving out each keyword of `added` (a parameter a later
    release gave an override point) that an override's signature does not take: the
    override was written against the earlier signature, and is called as that release
    called it, with one DeprecationWarning per override and parameter."""
    missing = [k for k in added if not accepts_keyword(method, k)]
    if missing and not _takes_any_keyword(method):
        from ..core.ruledocs import DOCS_URL  # only when an override needs the warning

        where = getattr(method, "__qualname__", repr(method))
        for k in missing:
            if (where, k) not in _WARNED:
                _WARNED.add((where, k))
                warnings.warn(
                    f"{where} takes no {k!r}: overridden with an earlier release's signature, so it is called "
                    f"without it; add the parameter ({DOCS_URL}public-names/)",
                    DeprecationWarning,
                    stacklevel=2,
                )
        added = {k: v for k, v in added.items() if k not in missing}
    return method(*args, **added)


def _takes_any_keyword(fn: Any) -> bool:
    """Whether `fn` has a `**kwargs` (then it takes every keyword)."""
    try:
        return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False


def override_points() -> dict[str, str]:
    """`module:Class.method` -> its signature, for every override point (`REFERENCE_CLASSES`'
    own public methods, in definition order)."""
    out: dict[str, str] = {}
    for ref in REFERENCE_CLASSES:
        module, _, name = ref.partition(":")
        cls = getattr(importlib.import_module(module), name)
        for attr, value in vars(cls).items():
            if attr.startswith("_") or not callable(value) or isinstance(value, type):
                continue
            out[f"{ref}.{attr}"] = str(inspect.signature(value))
    return out
