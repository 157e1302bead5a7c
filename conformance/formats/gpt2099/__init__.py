"""The gpt2099 format (seeds 000/001, cablehead/gpt2099.nu): threads of `gpt.turn` frames.

A peer of the canonical format: its own schemas (`schemas/gpt2099/v1/`), rules (GPxxx),
reader (JSON, JSON Lines and the NUON subset gpt2099 exports), `resolve` (a headish to the
context window gpt2099 would send) and converters to and from canonical. See
`reader` for the file shapes it accepts and how detection keeps off canonical files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...core.convertkit import ConvertContext, Converter
from ..base import Options
from . import reader
from .loading import load_thread as _load
from .rules import CATALOG
from .thread import ResolveError, Shape, Thread, deep_merge

if TYPE_CHECKING:
    from .checker import Gpt2099Run


# the checker and the converters load when used: `turnspec validate` detects every format
# on each run, and starts this one only on gpt2099 files
def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import to_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import from_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def __getattr__(name: str) -> Any:
    if name == "Gpt2099Run":  # PEP 562: the checker class, loaded at first use
        from .checker import Gpt2099Run  # function-level: see above

        return Gpt2099Run
    raise AttributeError(name)


class Gpt2099Format:
    name = "gpt2099"
    rules = CATALOG
    schema_family = "gpt2099"
    migrations = True  # conformance/migrations/gpt2099.py: inherited <-> options
    converters: ClassVar[dict[tuple[str, str], Converter]] = {
        ("gpt2099", "canonical"): to_canonical,
        ("canonical", "gpt2099"): from_canonical,
    }

    def detect(self, path: Path) -> bool:
        return reader.detect(path)

    def start(self, options: Options) -> Gpt2099Run:
        from .checker import Gpt2099Run  # function-level: loaded when a gpt2099 file is validated

        return Gpt2099Run(options)


def load_thread(path: Path) -> Thread:
    """Read a thread file (frames or records); raise `InputError` on the first error."""
    return _load(path)


def resolve(path: Path, headishes: list[str] | None = None) -> dict[str, object]:
    """The context window `{messages, options}` gpt2099 builds for `headishes` in `path`."""
    return load_thread(path).resolve(headishes)


__all__ = [
    "CATALOG",
    "Gpt2099Format",
    "Gpt2099Run",
    "ResolveError",
    "Shape",
    "Thread",
    "deep_merge",
    "load_thread",
    "resolve",
]
