"""Imported by the fork server of `--jobs` before it forks any worker (`engine.Processes`
names it in `set_forkserver_preload`): it builds a run for the default options there,
once, so every worker forked from the server starts with the run's shared parts made
(the fast model's Structs, the compiled patterns, the schema validators), and a run with
the default options ready. A worker for other options builds its own (`canonical_run`)
on the same warm parts. Nothing else imports this module: its import is the work."""

from __future__ import annotations

import contextlib

from ..formats.base import Options
from .chunks import canonical_run

# anything that fails here fails again in the worker that needs it, which reports it; the
# fork server itself must not die of it (it would take every later worker with it)
with contextlib.suppress(Exception):
    canonical_run(Options())
