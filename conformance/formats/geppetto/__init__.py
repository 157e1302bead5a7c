"""geppetto Turn YAML (seed 004): one Turn of ordered, typed blocks per file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...core.convertkit import ConvertContext, Converter
from ..base import Options
from .rules import CATALOG

if TYPE_CHECKING:
    from .checker import GeppettoRun

PEEK_BYTES = 64 * 1024
# A Turn file has a top-level `blocks:` key; the llm-runner fixture wrapper a `turn:` key.
_SHAPE = re.compile(rb"(?m)^(?:blocks|turn)[ \t]*:")


# the checker and the converters load when used: `turnspec validate` detects every format
# on each run, and starts this one only on geppetto files (~20 ms of imports saved)
def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import to_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    from .convert import from_canonical as run  # function-level: loaded when a conversion runs

    run(src, dst, ctx)


def __getattr__(name: str) -> Any:
    if name == "GeppettoRun":  # PEP 562: the checker class, loaded at first use
        from .checker import GeppettoRun  # function-level: see above

        return GeppettoRun
    raise AttributeError(name)


class GeppettoFormat:
    name = "geppetto"
    rules = CATALOG
    schema_family = "geppetto"
    migrations = False
    converters: ClassVar[dict[tuple[str, str], Converter]] = {
        ("geppetto", "canonical"): to_canonical,
        ("canonical", "geppetto"): from_canonical,
    }

    def detect(self, path: Path) -> bool:
        """A `.yaml`/`.yml` file whose first 64 KiB show a top-level `blocks:` or `turn:`."""
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            return False
        try:
            with path.open("rb") as f:
                head = f.read(PEEK_BYTES)
        except OSError:
            return False
        return _SHAPE.search(head.removeprefix(b"\xef\xbb\xbf")) is not None

    def start(self, options: Options) -> GeppettoRun:
        from .checker import GeppettoRun  # function-level: loaded when a geppetto file is validated

        return GeppettoRun(options)


__all__ = ["CATALOG", "GeppettoFormat", "GeppettoRun"]
