"""The migrations turnspec ships: one line per format (formats never import this engine; a
format says it has migrations with `Format.migrations`)."""

from __future__ import annotations

import functools

from . import canonical, gpt2099
from .registry import MigrationRegistry

PER_FORMAT = {
    "canonical": canonical,
    "gpt2099": gpt2099,
}


@functools.cache
def default_registry() -> MigrationRegistry:
    """The migrations turnspec ships (a fresh registry per process, never mutated)."""
    reg = MigrationRegistry()
    for name, module in PER_FORMAT.items():
        reg.register(module.MIGRATION)
        reg.register_detector(name, module.detect)
    return reg
