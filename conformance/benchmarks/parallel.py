"""`nox -s bench_jobs` / `nox -s bench_ray`: validate throughput on every core, as ratios.

One generated corpus (`--corpus`: `plain`, `synthetic.jsonl_lines`, or `agents`,
`realistic.agent_jsonl_lines`; all default rules plus `--tools` and `--pricing`),
measured in one run, best of `--repeat`:

- floor: read the JSONL and `orjson.loads` each line (one process);
- jobs=1: the sequential path; jobs=N: `validate --jobs N` (byte ranges; N-1 worker
  processes, and this one, which runs the session phase and, while it waits, ranges
  too), for N = 2 and the cores available;
- the CPU time of the two phases, each measured alone in this process (not disturbed by
  other load): `cpu_bound_scaling_2_free_cores` is the best `--jobs 2` can do;
- with `--ray`: `--engine ray` on a local Ray instance with `--ray-cpus` CPUs, on the
  path and on its `file://` URL (Ray's start-up is timed separately, once).

The scaling figure is `jobs=N / jobs=1`; every run also checks that the reports are
identical. Timings include starting the worker processes, as a user's run does.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from ..api import Report, default_jobs, expand, validate
from ..formats import Options
from ..parallel.chunks import canonical_run, cut_run_tail, plan, run_task
from ..parallel.engine import run_units
from .realistic import agent_jsonl_lines
from .synthetic import PRICING_YAML, TOOLS, jsonl_lines


def _best(fn: Callable[[], bytes], repeat: int) -> tuple[float, bytes]:
    best, out = float("inf"), b""
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run(n: int, repeat: int, ray: bool, ray_cpus: int, chunk_mb: float, corpus: str = "plain") -> dict[str, object]:
    chunk = int(chunk_mb * 1024 * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "bench.jsonl"
        with data.open("wb") as f:
            f.writelines(jsonl_lines(n, seed=2026) if corpus == "plain" else agent_jsonl_lines(n, seed=2026))
        tools = Path(tmp) / "tools.json"
        tools.write_text(json.dumps(TOOLS))
        pricing = Path(tmp) / "pricing.yaml"
        pricing.write_text(PRICING_YAML)
        options = Options(tools=tools, pricing=pricing)

        def floor() -> bytes:
            with data.open("rb") as fh:
                for line in fh:
                    orjson.loads(line)
            return b""

        def local(jobs: int) -> Callable[[], bytes]:
            return lambda: orjson.dumps(validate([data], options, jobs=jobs, chunk_bytes=chunk).as_dict())

        t_floor, _ = _best(floor, repeat)
        t1, want = _best(local(1), repeat)
        result: dict[str, object] = {
            "corpus": corpus,
            "messages": n,
            "file_mb": round(data.stat().st_size / 1e6, 1),
            "cores_available": default_jobs(),
            "chunk_mb": chunk_mb,
            "floor_msgs_per_s": round(n / t_floor),
            "jobs1_msgs_per_s": round(n / t1),
            "ratio_jobs1_vs_floor": round(t_floor / t1, 3),
        }
        # the split of the work, measured in this one process (so not disturbed by other
        # load): the local phase of every task, and the session phase over their results
        size = data.stat().st_size
        (tasks,) = cut_run_tail([(plan(str(data), size, True, chunk), size)], chunk)  # as run_units cuts them
        canonical_run(options)
        t0 = time.process_time()
        local(1)()
        t1_cpu = time.process_time() - t0
        t0 = time.process_time()
        results = [run_task(t, options) for t in tasks]
        t_local = time.process_time() - t0

        class Replay:
            def __init__(self) -> None:
                self.it = iter(results)

            def submit(self, task: object) -> Callable[[], bytes]:
                got = next(self.it)
                return lambda: got

            def close(self) -> None:
                pass

        t0 = time.process_time()
        for _ in run_units(expand([data]), options, lambda n, b: Replay(), chunk_bytes=chunk):
            pass
        t_session = time.process_time() - t0
        result["cpu_jobs1_s"] = round(t1_cpu, 3)
        result["cpu_local_phase_s"] = round(t_local, 3)
        result["cpu_session_phase_s"] = round(t_session, 3)
        result["cpu_split_overhead"] = round((t_local + t_session) / t1_cpu - 1, 3)
        # on 2 free cores a run takes at least max(session, (local + session) / 2) of CPU
        bound = max(t_session, (t_local + t_session) / 2)
        result["cpu_bound_scaling_2_free_cores"] = round(t1_cpu / bound, 2)
        for jobs in sorted({2, default_jobs()}):
            t, got = _best(local(jobs), repeat)
            if got != want:
                raise SystemExit(f"--jobs {jobs} report differs from --jobs 1")
            result[f"jobs{jobs}_msgs_per_s"] = round(n / t)
            result[f"scaling_jobs{jobs}_vs_jobs1"] = round(t1 / t, 2)
        if ray:
            # function-level import: Ray is the [ray] extra, measured only with --ray
            from ..parallel.ray_engine import start_ray, validate_ray

            t0 = time.perf_counter()
            ray_mod, _ = start_ray(None, ray_cpus)
            result["ray_start_s"] = round(time.perf_counter() - t0, 2)
            try:
                for label, target in (("path", str(data)), ("file_url", data.as_uri())):
                    units = expand([data]) if label == "path" else [(target, u) for _, u in expand([data])]

                    def go(units: list[tuple[object, object]] = units) -> bytes:  # type: ignore[assignment]
                        r = Report()
                        for f in validate_ray(units, options, jobs=ray_cpus, chunk_bytes=chunk, files=r.files):  # type: ignore[arg-type]
                            r.add(f)
                        return orjson.dumps(r.as_dict()).replace(data.as_uri().encode(), str(data).encode())

                    t, got = _best(go, repeat)
                    if got != want:
                        raise SystemExit(f"--engine ray ({label}) report differs from --jobs 1")
                    result[f"ray{ray_cpus}_{label}_msgs_per_s"] = round(n / t)
                    result[f"scaling_ray{ray_cpus}_{label}_vs_jobs1"] = round(t1 / t, 2)
            finally:
                ray_mod.shutdown()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--chunk-mb", type=float, default=4.0)
    ap.add_argument("--ray", action="store_true", help="also measure --engine ray (needs the [ray] extra)")
    ap.add_argument("--ray-cpus", type=int, default=2)
    ap.add_argument("--corpus", choices=("plain", "agents"), default="plain")
    args = ap.parse_args(argv)
    result = run(args.messages, args.repeat, args.ray, args.ray_cpus, args.chunk_mb, args.corpus)
    width = max(map(len, result))
    for k, v in result.items():
        sys.stdout.write(f"{k:<{width}}  {v}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
