"""`new-wire-api NAME --provider P`."""

from __future__ import annotations

import argparse

from .edit import Plan, Refused


def scaffold_args(a: argparse.Namespace, plan: Plan) -> list[str]:
    raise Refused("new-wire-api: not yet")
