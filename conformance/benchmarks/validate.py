"""`nox -s bench`: validate throughput as a ratio of the orjson parse floor, one process.

Everything is measured in the same run on the same generated file, so the ratios are
comparable across machines even when the absolute numbers are not (on a shared machine,
run it two or three times and read the ranges):

- floor: read the JSONL line by line and `orjson.loads` each line, nothing else;
- validate (default rules): `turnspec validate` as the library runs it (the fast path of
  `formats/canonical/fast/`), and the same on the exact path (`Options(exact=True)`);
- validate (schema only): `--select TS0`;
- validate (tools + pricing): every rule, plus `--tools` and `--pricing` (TS3xx/TS4xx);
- `--jobs 2`: default rules on two processes (`ROW_JOBS`: a worker, and this process,
  which runs the session phase and, while it waits, local steps too), interleaved with
  the rows above; `--jobs 1` is the default row;
- msgspec typed decode per line (the fast model, no rules) and jsonschema-rs `is_valid`
  on documents parsed beforehand (the two engines underneath);
- findings: a file of `n` lines of `{}` (7 findings each, counted as they stream, none
  kept) and of `n` distinct bad lines (`{"n": <i>}`: no two alike), as the time per
  finding over the time per clean line of the default row (issue 31: a finding should
  cost about what a clean line costs), and the peak RSS of `turnspec validate -q` on
  the `{}` file (bounded: findings stream);
- python-jsonschema: the reference oracle alone, on a sample (it is ~100x slower);
- startup: wall time of `turnspec validate` on the bundled example (120 messages) in a
  fresh process, best of 5 (the target is 0.3 s);
- peak RSS: of a `turnspec validate` process over the whole corpus (all rules), and of
  `turnspec validate --jobs 2` (the sum over its process tree: the parent, the fork
  server and the workers, sampled from /proc every 20 ms);
- strategies: valid canonical messages generated per second from the schemas
  (`conformance.strategies.bench`; target >= 1,000/s).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import orjson

from ..api import iter_validate
from ..core.findings import Selection
from ..core.schema_validation import SchemaValidator
from ..core.schemas import schema_set
from ..formats import Options
from ..formats.canonical.fastmodel import message_model
from .synthetic import PRICING_YAML, jsonl_lines

TOOLS = [
    {"name": n, "description": n, "side_effects": "read",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["path"]}}
    for n in ("read_file", "search_code", "run_tests")
]  # fmt: skip

# the `--jobs` rows: processes per row (a row runs `iter_validate(jobs=N)`)
ROW_JOBS: tuple[int, ...] = (2,)
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "examples"
_CLI = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"


def _startup(repeat: int = 5) -> float:
    """Best wall time of `turnspec validate` on the bundled example, in a fresh process."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _CLI, "validate", str(EXAMPLE)], check=True, capture_output=True)
        best = min(best, time.perf_counter() - t0)
    return best


def _peak_rss_mb(data: Path, tools: Path, pricing: Path) -> float:
    """Peak RSS of one `turnspec validate` process over the corpus (all rules), in MB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    args = ["validate", str(data), "--tools", str(tools), "--pricing", str(pricing)]
    subprocess.run([sys.executable, "-c", _CLI, *args], check=True, capture_output=True, env={**os.environ})
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(before, after) / 1024


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of `pid` and every process below it, in KB (0 once it is gone)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_bytes().splitlines():
                if line.startswith(b"VmRSS:"):
                    total += int(line.split()[1])
                    break
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(x) for x in (task / "children").read_bytes().split())
        except (OSError, ValueError):
            continue  # the process ended meanwhile
    return total


def _peak_tree_rss_mb(args: list[str], ok: tuple[int, ...] = (0,)) -> float | None:
    """Peak of the summed RSS of a `turnspec` process tree (None without /proc); an exit
    code not in `ok` stops the bench."""
    if not Path("/proc/self/task").is_dir():
        return None
    proc = subprocess.Popen([sys.executable, "-c", _CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kb(proc.pid))
        time.sleep(0.02)
    if proc.returncode not in ok:
        raise SystemExit(f"turnspec {' '.join(args)}: exit {proc.returncode}")
    return peak / 1024


def _timed(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - t0)
    return best, count


def _interleaved(rows: dict[str, Callable[[], int]], repeat: int) -> dict[str, float]:
    """Best time of each row over `repeat` rounds, the rows taking turns within a round."""
    best = dict.fromkeys(rows, float("inf"))
    for _ in range(repeat):
        for name, fn in rows.items():
            t, _ = _timed(fn, 1)
            best[name] = min(best[name], t)
    return best


def run(n: int, repeat: int, sample: int, out: Path | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "bench.jsonl"
        t0 = time.perf_counter()
        with data.open("wb") as f:
            f.writelines(jsonl_lines(n, seed=2026))
        gen_s = time.perf_counter() - t0
        size = data.stat().st_size
        tools = Path(tmp) / "tools.json"
        tools.write_text(json.dumps(TOOLS))
        pricing = Path(tmp) / "pricing.yaml"
        pricing.write_text(PRICING_YAML)

        def floor() -> int:
            k = 0
            with data.open("rb") as f:
                for line in f:
                    orjson.loads(line)
                    k += 1
            return k

        empty = Path(tmp) / "findings.jsonl"
        empty.write_bytes(b"{}\n" * n)
        distinct = Path(tmp) / "distinct.jsonl"
        with distinct.open("wb") as f:
            f.writelines(b'{"n": %d}\n' % i for i in range(n))

        def count_findings(path: Path) -> Callable[[], int]:
            def go() -> int:
                return sum(1 for _ in iter_validate([path], Options()))

            return go

        def validate_with(options: Options, jobs: int = 1) -> Callable[[], int]:
            def go() -> int:
                findings = list(iter_validate([data], options, jobs=jobs))
                if any(x.severity == "error" for x in findings):
                    raise SystemExit(f"benchmark corpus is not valid: {findings[:3]}")
                return n

            return go

        rows: dict[str, Callable[[], int]] = {
            "floor": floor,
            "default": validate_with(Options()),
            "schema": validate_with(Options(selection=Selection(select=("TS0",)))),
            "rules": validate_with(Options(tools=tools, pricing=pricing)),
            **{f"jobs{j}": validate_with(Options(), jobs=j) for j in ROW_JOBS},
        }
        best = _interleaved(rows, repeat)  # load on a shared machine hits every row alike
        t_floor, t_default, t_schema, t_rules = best["floor"], best["default"], best["schema"], best["rules"]
        t_exact, _ = _timed(validate_with(Options(exact=True)), 1)
        t_empty, n_empty = _timed(count_findings(empty), repeat)
        t_distinct, n_distinct = _timed(count_findings(distinct), 1)
        rss_findings = _peak_tree_rss_mb(["validate", "-q", "--jobs", "1", str(empty)], ok=(1,))
        decoder = msgspec.json.Decoder(message_model("v1").message)

        def typed_decode() -> int:
            k = 0
            with data.open("rb") as f:
                for line in f:
                    decoder.decode(line)
                    k += 1
            return k

        t_decode, _ = _timed(typed_decode, repeat)
        validator = SchemaValidator(schema_set("canonical", "v1"), "message.json")
        rs_n = min(n, 50_000)  # parsed documents are held in memory: a bounded share
        with data.open("rb") as fh:
            parsed = [orjson.loads(next(fh)) for _ in range(rs_n)]
        t_rs, _ = _timed(lambda: sum(validator.is_valid(d) for d in parsed), repeat)
        docs = parsed[:sample]
        parsed.clear()  # the rest is not needed any more
        t_oracle, _ = _timed(lambda: sum(validator.oracle_is_valid(d) for d in docs), 1)
        rss_mb = _peak_rss_mb(data, tools, pricing)
        rss_jobs = {j: _peak_tree_rss_mb(["validate", str(data), "--jobs", str(j)]) for j in ROW_JOBS}
    startup_s = _startup()
    from ..strategies import bench as strategies_bench  # function-level: measured after the validation rows

    gen = strategies_bench(seconds=3.0)
    floor_rate = n / t_floor

    def ratio(rate: float, digits: int = 3) -> float:
        return round(rate / floor_rate, digits)

    result: dict[str, object] = {
        "messages": n,
        "file_mb": round(size / 1e6, 1),
        "avg_message_bytes": round(size / n),
        "generate_s": round(gen_s, 1),
        "floor_orjson_msgs_per_s": round(floor_rate),
        "validate_default_msgs_per_s": round(n / t_default),
        "validate_default_exact_path_msgs_per_s": round(n / t_exact),
        "validate_schema_only_msgs_per_s": round(n / t_schema),
        "validate_tools_pricing_msgs_per_s": round(n / t_rules),
        **{f"validate_jobs{j}_msgs_per_s": round(n / best[f"jobs{j}"]) for j in ROW_JOBS},
        "msgspec_typed_decode_msgs_per_s": round(n / t_decode),
        "jsonschema_rs_is_valid_msgs_per_s": round(rs_n / t_rs),
        "python_jsonschema_msgs_per_s": round(sample / t_oracle),
        "ratio_default_vs_floor": ratio(n / t_default),
        "ratio_default_exact_path_vs_floor": ratio(n / t_exact),
        "ratio_schema_only_vs_floor": ratio(n / t_schema),
        "ratio_tools_pricing_vs_floor": ratio(n / t_rules),
        **{f"ratio_jobs{j}_vs_floor": ratio(n / best[f"jobs{j}"]) for j in ROW_JOBS},
        **{f"scaling_jobs{j}_vs_jobs1": round(t_default / best[f"jobs{j}"], 2) for j in ROW_JOBS},
        "findings_repeated_per_s": round(n_empty / t_empty),
        "findings_distinct_per_s": round(n_distinct / t_distinct),
        "ratio_finding_repeated_vs_clean_line": round((t_empty / n_empty) / (t_default / n), 2),
        "ratio_finding_distinct_vs_clean_line": round((t_distinct / n_distinct) / (t_default / n), 2),
        "peak_rss_validate_q_findings_mb": "n/a" if rss_findings is None else round(rss_findings),
        "ratio_msgspec_decode_vs_floor": ratio(n / t_decode),
        "ratio_jsonschema_rs_vs_floor": ratio(rs_n / t_rs),
        "ratio_python_jsonschema_vs_floor": ratio(sample / t_oracle, 4),
        "startup_validate_example_s": round(startup_s, 3),
        "peak_rss_validate_mb": round(rss_mb),
        **{f"peak_rss_validate_jobs{j}_tree_mb": "n/a" if v is None else round(v) for j, v in rss_jobs.items()},
        "load_average_1_5_15": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "bench_process_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        **{f"strategies_{k}": round(v, 1) for k, v in gen.items()},
    }
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sample", type=int, default=2_000, help="messages for the python-jsonschema measurement")
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    args = ap.parse_args(argv)
    result = run(args.messages, args.repeat, args.sample, args.out)
    width = max(map(len, result))
    for k, v in result.items():
        sys.stdout.write(f"{k:<{width}}  {v}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
