"""Schema migrations: a registry of pure, declared, fuzz-proven document transforms.

    from conformance.migrations import default_registry
    reg = default_registry()
    turn = reg.migrate("gpt2099", {"role": "user", "options": {...}}, target=2)

`migrate_file` (and `turnspec migrate IN --to N`) applies them to whole files and never
rewrites the input unless asked to (`in_place`), and then only by atomic rename.
"""

from __future__ import annotations

import functools

from . import canonical, gpt2099
from .registry import Change, Migration, MigrationError, MigrationRegistry, Step
from .run import MigrationResult, migrate_file

# Migrations register per format, keyed by the format's name (formats never import this
# engine; a format says it has migrations with `Format.migrations`). One line per format.
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


__all__ = [
    "PER_FORMAT",
    "Change",
    "Migration",
    "MigrationError",
    "MigrationRegistry",
    "MigrationResult",
    "Step",
    "default_registry",
    "migrate_file",
]
