"""Finding adapters: the `turnspec.adapters` entry-point group, or `module:attr` references.

An entry point or attribute may name an adapter instance, an adapter class (instantiated
with no arguments) or a zero-argument factory. Each load returns a fresh adapter so the
per-session tool-id maps of one run never leak into another.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from ..errors import InputError
from .base import Adapter

GROUP = "turnspec.adapters"


def available() -> dict[str, str]:
    """Registered adapter names -> their `module:attr` value."""
    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


def _instantiate(obj: Any, ref: str) -> Adapter:
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "to_wire")):
        try:
            obj = obj()
        except Exception as exc:  # a factory that needs arguments is not an adapter reference
            raise InputError(f"{ref}: not a turnspec adapter (calling it failed: {exc})") from None
    missing = [
        a
        for a in (
            "name",
            "capabilities",
            "to_wire",
            "from_wire_response",
            "stream_response",
            "estimate_input_tokens",
            "tool_id_map",
        )
        if not hasattr(obj, a)
    ]
    if missing:
        raise InputError(f"{ref}: not a turnspec adapter (missing {', '.join(missing)})")
    return obj  # type: ignore[no-any-return]


def load(ref: str) -> Adapter:
    """An adapter from a registered name (`anthropic`) or a `module:attr` reference."""
    if ":" in ref:
        module, _, attr = ref.partition(":")
        try:
            obj: Any = importlib.import_module(module)
        except ImportError as exc:
            raise InputError(f"{ref}: cannot import {module}: {exc}") from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise InputError(f"{ref}: {module} has no attribute {attr}") from None
        return _instantiate(obj, ref)
    for ep in entry_points(group=GROUP):
        if ep.name == ref:
            return _instantiate(ep.load(), ref)
    known = ", ".join(sorted(available())) or "none"
    raise InputError(f"unknown adapter {ref!r} (registered: {known}; or pass module:attr)")


def load_all() -> list[Adapter]:
    return [load(name) for name in sorted(available())]
