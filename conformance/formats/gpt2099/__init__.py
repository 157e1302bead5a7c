"""The gpt2099 format (seeds 000/001, cablehead/gpt2099.nu): threads of `gpt.turn` frames.

A peer of the canonical format: its own schemas (`schemas/gpt2099/v1/`), rules (GPxxx),
reader (JSON, JSON Lines and the NUON subset gpt2099 exports), `resolve` (a headish to the
context window gpt2099 would send) and converters to and from canonical. See
`reader` for the file shapes it accepts and how detection keeps off canonical files.
"""

from __future__ import annotations

from pathlib import Path

from ..base import PeerFormat
from . import reader
from .rules import CATALOG
from .thread import ResolveError, Shape, Thread, deep_merge


class Gpt2099Format(PeerFormat):
    name = "gpt2099"
    rules = CATALOG
    schema_family = "gpt2099"
    migrations = True  # conformance/migrations/gpt2099.py: inherited <-> options
    run_class = "Gpt2099Run"  # checker.py; it and convert.py load when used (`base.PeerFormat`)

    def detect(self, path: Path) -> bool:
        return reader.detect(path)


def load_thread(path: Path) -> Thread:
    """Read a thread file (frames or records); raise `InputError` on the first error."""
    from .loading import load_thread as load  # function-level: it loads the checker, used when resolving

    return load(path)


def resolve(path: Path, headishes: list[str] | None = None) -> dict[str, object]:
    """The context window `{messages, options}` gpt2099 builds for `headishes` in `path`."""
    return load_thread(path).resolve(headishes)


__all__ = [
    "CATALOG",
    "Gpt2099Format",
    "ResolveError",
    "Shape",
    "Thread",
    "deep_merge",
    "load_thread",
    "resolve",
]
