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
import random
from collections.abc import Iterator
from typing import Any

from hypothesis.strategies import SearchStrategy

from ..core.schemas import schema_set
from .compiler import Compiler
from .conversations import blocks_for, conversations
from .ir import UnsupportedSchema
from .mutations import Invalid, Mutator


@functools.cache
def compiler(fmt: str = "canonical", version: str = "v1") -> Compiler:
    """The (cached) compiler of one schema set."""
    return Compiler(schema_set(fmt, version))


def documents(root: str = "message.json", *, fmt: str = "canonical", version: str = "v1") -> SearchStrategy[Any]:
    """Documents valid under `schemas/<fmt>/<version>/<root>`."""
    return compiler(fmt, version).valid(root)


@functools.cache
def _mutator(root: str, fmt: str, version: str) -> Mutator:
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

    sampler, r = Sampler(compiler(fmt, version)), random.Random(seed)
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
