"""turnspec: reference schemas, validator and adapter conformance suite for the canonical
LLM conversation format.

The package is importable as `conformance`; the generated models as `turnspec_models`.
The library API below is loaded when first used (`conformance.validate`, `from
conformance import Options`): importing the package, as every `turnspec` command does
(`turnspec --version` too), costs nothing more.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .api import Report, iter_validate, validate
    from .core.findings import Finding, RuleInfo, Selection, Severity
    from .formats import Options

# name -> the module that defines it (imported at first use: `__getattr__`)
_API = {
    "Finding": ".core.findings",
    "Options": ".formats",
    "Report": ".api",
    "RuleInfo": ".core.findings",
    "Selection": ".core.findings",
    "Severity": ".core.findings",
    "iter_validate": ".api",
    "validate": ".api",
}


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)  # loaded only when the API is used
    globals()[name] = value
    return value


__all__ = [
    "Finding",
    "Options",
    "Report",
    "RuleInfo",
    "Selection",
    "Severity",
    "__version__",
    "iter_validate",
    "validate",
]
