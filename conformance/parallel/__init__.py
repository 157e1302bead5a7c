"""Validation beyond one process: `--jobs N` (worker processes), `--resume DIR` (a store
of finished tasks) and `--engine ray` (Ray tasks, local paths and fsspec URLs).

Every engine runs the same split: in the workers, the fast path's local steps
(`FastPath.local_block`, which also checks each batch's own order; the exact
`CanonicalRun.local` for a line they cannot clear), and here, in input order, the session
step (`FastPath.session_batch` and `FastPath.session`, or `CanonicalRun.session`), so
every one reports exactly what one process reports.
"""

from __future__ import annotations

import os

DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024
"""The byte ranges of `.jsonl` files that tasks take (`chunks.plan`)."""

MIN_SHARED_BYTES = 1024 * 1024
"""Below this much input (or two tasks' worth, if less), starting worker processes costs
more than it saves: the tasks run in this process."""


def default_jobs() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


MIN_TASK_BYTES = 256 * 1024
"""Below this much input per task on average (or half a chunk, if less), a task costs
more to send to a worker and back than to run here: 1,250 files of 40 messages each took
14-17 us per message with `--jobs 2` against 9-10 with `--jobs 1`."""


def worth_sharing(n_bytes: int, chunk_bytes: int, n_tasks: int = 1) -> bool:
    """True when `n_bytes` of canonical input in `n_tasks` tasks is enough to share among
    worker processes: enough in all, and enough per task."""
    return n_bytes >= min(MIN_SHARED_BYTES, 2 * chunk_bytes) and n_bytes >= n_tasks * min(
        MIN_TASK_BYTES, chunk_bytes // 2
    )
