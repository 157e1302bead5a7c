"""The adapter conformance suite (checks TCxxx, runner, reports, pytest plugin, base test class)."""

from __future__ import annotations

from .roundtrip import round_trip

__all__ = ["round_trip"]
