"""The adapter conformance suite (checks TCxxx, runner, reports, pytest plugin, base test class)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .roundtrip import round_trip


def __getattr__(name: str) -> Any:
    # the round trip (and the checks, cassettes and adapters it reads) loaded at first use:
    # `turnspec rule TC...` reads the suite's rules alone (`suite.rules`)
    if name == "round_trip":
        from .roundtrip import round_trip  # loaded only when the round trip is run

        return round_trip
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["round_trip"]
