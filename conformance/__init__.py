"""turnspec: reference schemas, validator and adapter conformance suite for the canonical
LLM conversation format.

The package is importable as `conformance`; the generated models as `turnspec_models`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import Report, iter_validate, validate
from .core.findings import Finding, RuleInfo, Selection, Severity
from .formats import Options

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
