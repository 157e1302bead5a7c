"""Schema migrations: a registry of pure, declared, fuzz-proven document transforms.

    from conformance.migrations import default_registry
    reg = default_registry()
    turn = reg.migrate("gpt2099", {"role": "user", "options": {...}}, target=2)

`migrate_file` (and `turnspec migrate IN --to N`) applies them to whole files and never
rewrites the input unless asked to (`in_place`), and then only by atomic rename.
"""

from __future__ import annotations

from .registry import Change, Migration, MigrationError, MigrationRegistry, Step
from .run import MigrationResult, migrate_file
from .shipped import PER_FORMAT, default_registry

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
