"""`nox -s bench` (commands that answer at once): whole `turnspec schema diff` processes.

Each row is the best wall time of `--repeat` fresh processes (the machine is shared:
the minimum is the least disturbed run), with the target of issue 38 beside it:

- `schema_diff_canonical_v1_v2_s`: `turnspec schema diff schemas/canonical/v1 schemas/canonical/v2`
  (target 5 s);
- `schema_diff_small_s`: two revisions of a 3-property schema, every direction decided
  by a witness or by structure (target 1 s);
- `schema_diff_hook_s`: the `turnspec-schema-diff` pre-commit hook's command
  (`--fail-on backward --against HEAD FILE`) on a small schema in a scratch git
  repository (target 1 s; pre-commit's own start-up comes on top);
- `python_startup_s`: `python -c pass`, the floor every row includes.

These are figures to read, not assertions: tests never time anything.

    python -m conformance.benchmarks.commands [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..core.schemas import schema_root

_CLI = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
TARGETS = {"schema_diff_canonical_v1_v2_s": 5.0, "schema_diff_small_s": 1.0, "schema_diff_hook_s": 1.0}
SMALL_OLD = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}, "tags": {"type": "array"}},
    "required": ["name"],
}
SMALL_NEW = {
    **SMALL_OLD,
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "maxItems": 3},
    },
    "required": ["name", "age"],
}


def _best(argv: list[str], repeat: int, ok: tuple[int, ...] = (0, 1), cwd: Path | None = None) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, cwd=cwd, check=False)
        best = min(best, time.perf_counter() - t0)
        if done.returncode not in ok:
            raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
    return best


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=cwd, check=True, capture_output=True
    )


def run(repeat: int) -> dict[str, object]:
    py = sys.executable
    canonical = schema_root() / "canonical"
    out: dict[str, object] = {"python_startup_s": _best([py, "-c", "pass"], repeat)}
    out["schema_diff_canonical_v1_v2_s"] = _best(
        [py, "-c", _CLI, "schema", "diff", str(canonical / "v1"), str(canonical / "v2")], repeat
    )
    with tempfile.TemporaryDirectory(prefix="turnspec-bench-") as tmp:
        for side, doc in (("old", SMALL_OLD), ("new", SMALL_NEW)):
            (Path(tmp) / side).mkdir()
            (Path(tmp) / side / "s.json").write_text(json.dumps(doc))
        out["schema_diff_small_s"] = _best(
            [py, "-c", _CLI, "schema", "diff", f"{tmp}/old/s.json", f"{tmp}/new/s.json"], repeat
        )
        if shutil.which("git") is not None:
            repo = Path(tmp) / "repo"
            (repo / "schemas").mkdir(parents=True)
            (repo / "schemas" / "s.json").write_text(json.dumps(SMALL_OLD))
            _git(repo, "init", "-q")
            _git(repo, "add", ".")
            _git(repo, "commit", "-qm", "one")
            (repo / "schemas" / "s.json").write_text(json.dumps(SMALL_NEW))
            hook = ["schema", "diff", "--fail-on", "backward", "--against", "HEAD", "schemas/s.json"]
            out["schema_diff_hook_s"] = _best([py, "-c", _CLI, *hook], repeat, cwd=repo)
    for key, target in TARGETS.items():
        value = out.get(key)
        if isinstance(value, float):
            out[f"{key.removesuffix('_s')}_target_s"] = target
    out["load_average_1_5_15"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    result = run(args.repeat)
    width = max(map(len, result))
    for k, v in result.items():
        sys.stdout.write(f"{k:<{width}}  {v}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
