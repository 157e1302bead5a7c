"""Validation beyond one process: `--jobs N` (worker processes), `--resume DIR` (a store
of finished tasks) and `--engine ray` (Ray tasks, local paths and fsspec URLs).

Every engine runs the same split (`CanonicalRun.local` in workers, `CanonicalRun.session`
here, in input order), so every one reports exactly what one process reports.
"""
