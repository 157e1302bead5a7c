"""Semantic checks over what the wire API's record locates (filled in by the next commit)."""

from __future__ import annotations

from .common import Check

CHECKS: tuple[Check, ...] = ()
