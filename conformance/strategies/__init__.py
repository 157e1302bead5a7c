"""Hypothesis strategies compiled from turnspec's JSON Schemas, for adapter authors and
schema maintainers.

    from conformance.strategies import documents, invalid_documents, conversations

    @given(conversations())
    def test_my_adapter_round_trips(session): ...

- `documents(root)`: documents the schema accepts (every keyword the project's schemas
  use; unsupported keywords raise `UnsupportedSchema` when the strategy is built).
- `invalid_documents(root)`: documents breaking exactly one constraint, as `Invalid`
  records labelled with the pointer and keyword of the broken constraint.
- `conversations()`: whole sessions that also satisfy the rule engine (ULIDs monotonic,
  tool_use/tool_result paired, role/content compatible, complete assistant metadata).
- `sample(root, n, seed=)`: fast seeded valid documents for bulk use (no shrinking).
- `bench()`: generation speed in documents per second (`nox -s bench`).
"""

from __future__ import annotations

import functools
import importlib
import random
import sys
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..core.schemas import schema_set

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from .compiler import Compiler
    from .conversations import blocks_for, conversations
    from .ir import UnsupportedSchema
    from .mutations import Invalid, Mutator
    from .plain import Plain

# Names loaded at first use (PEP 562): importing a submodule (`strategies.ir`, the
# hypothesis-free `strategies.sampler`) runs this file, and hypothesis takes longer to
# import than `turnspec schema diff` takes to compare a small schema.
_LAZY = {
    "Compiler": "compiler",
    "blocks_for": "conversations",
    "conversations": "conversations",
    "UnsupportedSchema": "ir",
    "Invalid": "mutations",
    "Mutator": "mutations",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """This package, keeping its functions named like its submodules (`bench()`,
    `compiler()`, `conversations()`): importing a submodule binds it as an attribute of
    its package, which would replace the function of that name. (The eager imports
    this file used to run came before the functions were defined, so they never did.)"""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FUNCTIONS_NAMED_LIKE_MODULES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


_FUNCTIONS_NAMED_LIKE_MODULES = frozenset({"bench", "compiler", "conversations"})
sys.modules[__name__].__class__ = _Package


@functools.cache
def compiler(fmt: str = "canonical", version: str = "v1") -> Compiler:
    """The (cached) compiler of one schema set."""
    from .compiler import Compiler

    return Compiler(schema_set(fmt, version))


@functools.cache
def _plain(fmt: str, version: str) -> Plain:
    from .plain import Plain  # the sampler's source: the compiler's graph without hypothesis

    return Plain(schema_set(fmt, version))


def documents(root: str = "message.json", *, fmt: str = "canonical", version: str = "v1") -> SearchStrategy[Any]:
    """Documents valid under `schemas/<fmt>/<version>/<root>`."""
    return compiler(fmt, version).valid(root)


@functools.cache
def _mutator(root: str, fmt: str, version: str) -> Mutator:
    from .mutations import Mutator

    return Mutator(compiler(fmt, version), root)


def invalid_documents(
    root: str = "message.json", *, fmt: str = "canonical", version: str = "v1"
) -> SearchStrategy[Invalid]:
    """Documents that break exactly one constraint of `root`, labelled (`Invalid`)."""
    return _mutator(root, fmt, version).strategy()


def sample(
    root: str = "message.json",
    n: int = 1000,
    *,
    seed: int = 0,
    fmt: str = "canonical",
    version: str = "v1",
) -> Iterator[Any]:
    """`n` valid documents, deterministic for a seed, at thousands per second."""
    from .sampler import Sampler  # function-level: the fast sampler loads only when sampling

    sampler, r = Sampler(_plain(fmt, version)), random.Random(seed)
    for _ in range(n):
        yield sampler.sample(root, r)


def bench(seconds: float = 3.0, root: str = "message.json") -> dict[str, float]:
    """Documents generated per second (see conformance/strategies/bench.py)."""
    from .bench import run  # function-level: the benchmark is not part of the library's import

    return run(seconds=seconds, root=root)


__all__ = [
    "Compiler",
    "Invalid",
    "UnsupportedSchema",
    "bench",
    "blocks_for",
    "compiler",
    "conversations",
    "documents",
    "invalid_documents",
    "sample",
]
