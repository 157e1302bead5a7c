"""The fast path's compiled loops (`_walk.c`), when they can be used: the batch loop of the
one-message rules (`walk`, of `mirror._walk_py`), the raw values' proof (`opaque_ok`, of
`blocks.OpaqueCheck.ok`), the pairing of a batch's tool blocks (`pair_tools`, of
`sessions.pair_tools`), the columns of a batch (`column` and `present`, of
`batch.column_py` and `batch.present_py`), the tool ids of a batch (`tool_ids`, of
`mirror.tool_ids_py`) and the pricing loop (`priced`, of
`mirror._priced_py`, which asks `Mirror._priced` whatever its integers cannot settle).

`hatch_build.py` builds it at install where a C compiler is found (an editable install
puts it beside its source, a wheel carries it); everywhere else the same loops in Python
run. The build records the SHA-256 of the source it was compiled
from (`_walk.SOURCE`): a build beside a source that has changed since is not used, so an
edit to `_walk.c` without a rebuild can never run old code. `TURNSPEC_PURE_PYTHON=1`
turns it off (the differential test and the bench compare the two)."""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

SOURCE = Path(__file__).with_name("_walk.c")


def source_hash() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


@functools.cache  # once per process: each module holding a compiled loop asks at import
def status() -> str:
    """`compiled`, or why the Python loop runs: `off` (TURNSPEC_PURE_PYTHON), `not built`
    (no compiler at install), `stale` (built from another version of `_walk.c`)."""
    if os.environ.get("TURNSPEC_PURE_PYTHON"):
        return "off"
    try:
        walk = _built()
    except ImportError:
        return "not built"
    try:
        current = source_hash()
    except OSError:  # an installed wheel carries its build, not necessarily the source
        return "compiled"
    return "compiled" if current == walk.SOURCE else "stale"


def function(name: str) -> Callable[..., Any] | None:
    """`_walk.<name>`, or None when `status()` is not `compiled`: the Python runs."""
    if status() != "compiled":
        return None
    fn: Callable[..., Any] = getattr(_built(), name)
    return fn


def _built() -> ModuleType:
    """The extension module `_walk` (ImportError when it was not built)."""
    return importlib.import_module(f"{__package__}._walk")
