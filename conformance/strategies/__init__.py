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

`root` names the type to generate: a schema file of `schemas/<fmt>/<version>/`, by its file
name (`message.json`, the default; `content-block.json`, `tool-definition.json`,
`stream-event.json`, ... for canonical; `turn-frame.json` for gpt2099, `entry.json` for
chibi, `turn.json` for geppetto). A name the set does not hold, or an unknown `fmt` or
`version`, is a `ValueError` of one line that lists the names it holds.
"""

from __future__ import annotations

import functools
import importlib
import random
import sys
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..core.schemas import schema_root, schema_set, versions

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


def families() -> list[str]:
    """The schema families strategies can be compiled for (`schemas/<fmt>/`, wire aside)."""
    return sorted(p.name for p in schema_root().iterdir() if p.is_dir() and p.name != "wire" and versions(p.name))


@functools.cache
def compiler(fmt: str = "canonical", version: str = "v1") -> Compiler:
    """The (cached) compiler of one schema set."""
    from .compiler import Compiler

    return Compiler(schema_set(fmt, version))


def _known(root: str, fmt: str, version: str) -> None:
    """Nothing, once `root` is known to be one of the schema files of `fmt` `version`;
    else a one-line `ValueError` naming what is (module doc)."""
    if fmt not in families() or version not in versions(fmt):
        known = ", ".join(f"{f} {'/'.join(versions(f))}" for f in families())
        raise ValueError(f"no schemas for {fmt} {version} (known: {known})")
    names = sorted(schema_set(fmt, version).documents)
    if root not in names:
        hint = f"; did you mean {root.lower().removesuffix('.json')}.json?" if f"{root.lower()}.json" in names else ""
        raise ValueError(f"root {root!r} is not a schema of {fmt} {version}{hint} (one of: {', '.join(names)})")


@functools.cache
def _plain(fmt: str, version: str) -> Plain:
    from .plain import Plain  # the sampler's source: the compiler's graph without hypothesis

    return Plain(schema_set(fmt, version))


def documents(root: str = "message.json", *, fmt: str = "canonical", version: str = "v1") -> SearchStrategy[Any]:
    """Documents valid under `schemas/<fmt>/<version>/<root>` (`root`: a schema file name)."""
    _known(root, fmt, version)
    return compiler(fmt, version).valid(root)


@functools.cache
def _mutator(root: str, fmt: str, version: str) -> Mutator:
    from .mutations import Mutator

    return Mutator(compiler(fmt, version), root)


def invalid_documents(
    root: str = "message.json", *, fmt: str = "canonical", version: str = "v1"
) -> SearchStrategy[Invalid]:
    """Documents that break exactly one constraint of `root` (a schema file name), labelled (`Invalid`)."""
    _known(root, fmt, version)
    return _mutator(root, fmt, version).strategy()


def sample(
    root: str = "message.json",
    n: int = 1000,
    *,
    seed: int = 0,
    fmt: str = "canonical",
    version: str = "v1",
) -> Iterator[Any]:
    """`n` valid documents of `root` (a schema file name), deterministic for a seed, at thousands per second."""
    from .sampler import Sampler  # function-level: the fast sampler loads only when sampling

    _known(root, fmt, version)
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
