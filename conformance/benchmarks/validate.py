"""`nox -s bench`: validate throughput as a ratio of the orjson parse floor, and the time of
the commands a person waits for.

Everything is measured in the same run on the same generated files, so the ratios are
comparable across machines even when the absolute numbers are not (on a shared machine,
run it two or three times and read the ranges; the load average is printed with them).

Two corpora, each measured by every row below, their keys prefixed `plain_` and
`agents_`:

- plain (`synthetic.jsonl_lines`): sessions one after another, every block type;
- agents (`realistic.agent_jsonl_lines`): agent sessions interleaved in one file (a long
  system prompt, user turns, assistant turns thinking with signatures and calling tools
  in parallel, tool results, images, routing decisions, usage and cost with cache
  tokens on every assistant turn).

The rows of a corpus:

- floor: read the JSONL line by line and `orjson.loads` each line, nothing else;
- validate (default rules): `turnspec validate` as the library runs it (the fast path of
  `formats/canonical/fast/`), the same on the exact path (`Options(exact=True)`), and the
  same with the compiled loops of `fast/_walk.c` turned off (`default_python_loops`, as
  where no C compiler was there at install; `compiled_loops` says which ran);
- validate (schema only): `--select TS0`;
- validate (tools + pricing): every rule, plus `--tools` and `--pricing` (TS3xx/TS4xx);
- `--jobs 2`: default rules on two processes (`ROW_JOBS`), in this process, interleaved
  with the rows above;
- process: whole `turnspec validate -q --jobs N FILE` processes (start-up, reading,
  reporting: what a user waits for), `--jobs 1` against the floor and `--jobs 2`
  against `--jobs 1` (same report, checked);
- msgspec typed decode per line (the fast model, no rules) and jsonschema-rs `is_valid`
  on documents parsed beforehand (the two engines underneath);
- the fast path's proof alone (`proof`): what `FastPath._first_bad` does to every block
  before any rule runs (the raw model's batch decode, the re-encoding compared with the
  input, which proves no duplicate key, and the UTF-8 of the raw strings), so
  `ratio_proof_vs_floor` is the ceiling of the default row on this design: rules only
  lower it;
- the fast path's local steps alone (`local`): `FastPath.local_block` on every block
  (the proof, the string formats, the one-message rules and the batching, as a
  `--jobs` worker runs them) but no session step, so the default row's time splits
  into the proof, the rest of the local steps (`local` less `proof`) and the session
  step (`default` less `local`): `share_*_of_default` says which part costs what;
- python-jsonschema: the reference oracle alone, on a sample (it is ~100x slower);
- peak RSS of a `turnspec validate` process over the whole corpus (all rules), and of
  `--jobs 2` (the sum over its process tree, sampled from /proc every 20 ms).

Once per run:

- findings: a file of `n` lines of `{}` (7 findings each, counted as they stream, none
  kept) and of `n` distinct bad lines (`{"n": <i>}`), as the time per finding over the
  time per clean line of the plain default row (a finding should cost about what a
  clean line costs), and the peak RSS of `turnspec validate -q` on the `{}` file;
- start-up: the best wall time of `python -c pass`, and how much longer `turnspec
  --version`, `turnspec validate` of a one-line file and of the bundled example take
  (each a process running what the console script runs, from compiled bytecode);
- commands: `turnspec rule ID` and `turnspec models --target T` for each target whose
  tools are installed (best wall time);
- strategies: valid canonical messages generated per second from the schemas.

Last, `TARGETS`: each figure issue 38 sets a goal for, its goal and whether it is met;
and `cpu_steal_share`, the share of the machine's CPU time its host took for others
during the run (`steal` in /proc/stat; `n/a` where there is none): past a few percent the
seconds swing between runs and rows, and the instruction counts of
`nox -s bench_instructions` are the figures to compare.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import orjson

from ..api import iter_validate
from ..core.findings import Selection
from ..core.jsonio import LineFraming
from ..core.schema_validation import SchemaValidator
from ..core.schemas import schema_set
from ..formats import Options
from ..formats.canonical.fast import COMPILED_SWITCHES, FastPath, compiled, read_blocks
from ..formats.canonical.fastmodel import message_model
from ..parallel.chunks import canonical_run
from .realistic import agent_jsonl_lines
from .synthetic import PRICING_YAML, TOOLS, jsonl_lines

# the `--jobs` rows: processes per row (a row runs `iter_validate(jobs=N)`)
ROW_JOBS: tuple[int, ...] = (2,)
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "examples"
# what the `turnspec` console script runs (`[project.scripts]`)
_CLI = "import sys; from conformance.entry import main; sys.exit(main(sys.argv[1:]))"
# the processes measured read compiled bytecode, as an installed turnspec does (pip
# compiles it): a PYTHONDONTWRITEBYTECODE here would make each start compile every module
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CORPORA: dict[str, Callable[[int], Iterator[bytes]]] = {
    "plain": lambda n: jsonl_lines(n, seed=2026),
    "agents": lambda n: agent_jsonl_lines(n, seed=2026),
}
MODEL_TARGETS = ("pydantic", "typeddict", "dataclasses", "msgspec", "typescript")
RULE_ID = "TS202"

# (figure, goal, "min": at least the goal, "max": at most) of issue 38
TARGETS: tuple[tuple[str, float, str], ...] = (
    ("agents_ratio_default_vs_floor", 0.8, "min"),
    ("plain_ratio_default_vs_floor", 1.0, "min"),
    ("agents_ratio_tools_pricing_vs_floor", 0.7, "min"),
    ("plain_ratio_tools_pricing_vs_floor", 0.7, "min"),
    ("agents_scaling_process_jobs2_vs_jobs1", 1.8, "min"),
    ("plain_scaling_process_jobs2_vs_jobs1", 1.8, "min"),
    ("startup_version_over_bare_s", 0.15, "max"),
    ("startup_validate_one_line_over_bare_s", 0.25, "max"),
    ("command_rule_s", 0.5, "max"),
    *((f"command_models_{t}_s", 3.0, "max") for t in MODEL_TARGETS),
)


_PROC_STAT = Path("/proc/stat")


def cpu_counters(stat: Path = _PROC_STAT) -> tuple[int, int] | None:
    """(steal, total) of the machine's CPU time so far, in clock ticks (the `cpu` line of
    /proc/stat: user nice system idle iowait irq softirq steal ...), or None where the
    file or its steal column is not there."""
    try:
        head = stat.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if len(head) < 9 or head[0] != "cpu" or not all(x.isdigit() for x in head[1:9]):
        return None
    ticks = [int(x) for x in head[1:9]]  # guest time is counted in user already
    return ticks[7], sum(ticks)


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | str:
    """The share of the CPU time between two `cpu_counters` readings that the host stole."""
    if before is None or after is None or after[1] <= before[1]:
        return "n/a"
    return round((after[0] - before[0]) / (after[1] - before[1]), 3)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", _CLI, *args]


def _best_process(argv: list[str], repeat: int, ok: tuple[int, ...] = (0,)) -> float:
    """Best wall time of a fresh process running `argv`; an exit code not in `ok` stops the bench."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False, env=_ENV)
        best = min(best, time.perf_counter() - t0)
        if done.returncode not in ok:
            raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
    return best


def _peak_rss_mb(args: list[str]) -> float:
    """Peak RSS of one `turnspec` process, in MB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(_cli(*args), check=True, capture_output=True, env=_ENV)
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
    proc = subprocess.Popen(_cli(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_ENV)
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


def _floor(data: Path) -> Callable[[], int]:
    def floor() -> int:
        k = 0
        with data.open("rb") as f:
            for line in f:
                orjson.loads(line)
                k += 1
        return k

    return floor


def _proof(data: Path) -> Callable[[], int]:
    """The `proof` row: `FastPath._first_bad` on every block of `data`, as the fast path
    reads them (`read_blocks`); a block it cannot prove stops the bench."""
    fast = FastPath(canonical_run(Options()))

    def proof() -> int:
        k = 0
        with data.open("rb") as f:
            for block in read_blocks(f, 1 << 30):
                if block is None or fast._first_bad(block) is not None:
                    raise SystemExit(f"{data.name}: a block the fast path cannot prove at once")
                k += 1
        return k

    return proof


def _local(data: Path) -> Callable[[], int]:
    """The `local` row: `FastPath.local_block` on every block of `data` as the fast path
    reads them (the steps a `--jobs` worker runs: no session step; a line it does not
    clear is left for the exact path, which this row does not run)."""
    fast = FastPath(canonical_run(Options()))

    def local() -> int:
        k = 0
        framing = LineFraming(str(data))
        line = 1
        with data.open("rb") as f:
            for block in read_blocks(f, 1 << 30):
                _steps, n = fast.local_block(framing, line, block)
                line += n
                k += n
        return k

    return local


def _python_loops(fn: Callable[[], int]) -> Callable[[], int]:
    """`fn` with the fast path's compiled loops (`fast/_walk.c`) turned off: their Python
    twins run, as on a machine where they could not be built."""
    slots = COMPILED_SWITCHES

    def go() -> int:
        kept = [getattr(mod, name) for mod, name in slots]
        for mod, name in slots:
            setattr(mod, name, None)
        try:
            return fn()
        finally:
            for (mod, name), value in zip(slots, kept, strict=True):
                setattr(mod, name, value)

    return go


def _corpus(
    data: Path, n: int, repeat: int, sample: int, tools: Path, pricing: Path
) -> tuple[dict[str, object], float]:
    """Every row of one corpus file of `n` messages (module doc), unprefixed, and the time
    of one clean message in the default row."""

    def validate_with(options: Options, jobs: int = 1) -> Callable[[], int]:
        def go() -> int:
            findings = list(iter_validate([data], options, jobs=jobs))
            if any(x.severity == "error" for x in findings):
                raise SystemExit(f"benchmark corpus is not valid: {findings[:3]}")
            return n

        return go

    def process(jobs: int) -> Callable[[], int]:
        argv = _cli("validate", "-q", "--jobs", str(jobs), str(data))

        def go() -> int:
            _best_process(argv, 1)
            return n

        return go

    timed: dict[str, Callable[[], int]] = {
        "floor": _floor(data),
        "proof": _proof(data),
        "local": _local(data),
        "default": validate_with(Options()),
        "default_python_loops": _python_loops(validate_with(Options())),
        "schema": validate_with(Options(selection=Selection(select=("TS0",)))),
        "rules": validate_with(Options(tools=tools, pricing=pricing)),
        **{f"jobs{j}": validate_with(Options(), jobs=j) for j in ROW_JOBS},
        "process_jobs1": process(1),
        **{f"process_jobs{j}": process(j) for j in ROW_JOBS},
    }
    best = _interleaved(timed, repeat)  # load on a shared machine hits every row alike
    reports = {j: subprocess.run(_cli("validate", "-o", "json", "--jobs", str(j), str(data)), capture_output=True, env=_ENV).stdout
               for j in (1, *ROW_JOBS)}  # fmt: skip
    if len(set(reports.values())) != 1:
        raise SystemExit(f"{data.name}: the reports of --jobs {', '.join(map(str, reports))} differ")
    t_floor = best["floor"]
    t_exact, _ = _timed(validate_with(Options(exact=True)), 1)
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
    rss_mb = _peak_rss_mb(["validate", str(data), "--tools", str(tools), "--pricing", str(pricing)])
    rss_jobs = {j: _peak_tree_rss_mb(["validate", str(data), "--jobs", str(j)]) for j in ROW_JOBS}
    size = data.stat().st_size
    floor_rate = n / t_floor

    def ratio(rate: float, digits: int = 3) -> float:
        return round(rate / floor_rate, digits)

    rows: dict[str, object] = {
        "messages": n,
        "file_mb": round(size / 1e6, 1),
        "avg_message_bytes": round(size / n),
        "floor_orjson_msgs_per_s": round(floor_rate),
        "validate_default_msgs_per_s": round(n / best["default"]),
        "validate_default_exact_path_msgs_per_s": round(n / t_exact),
        "validate_schema_only_msgs_per_s": round(n / best["schema"]),
        "validate_tools_pricing_msgs_per_s": round(n / best["rules"]),
        **{f"validate_jobs{j}_msgs_per_s": round(n / best[f"jobs{j}"]) for j in ROW_JOBS},
        "process_jobs1_s": round(best["process_jobs1"], 3),
        **{f"process_jobs{j}_s": round(best[f"process_jobs{j}"], 3) for j in ROW_JOBS},
        "msgspec_typed_decode_msgs_per_s": round(n / t_decode),
        "fast_proof_msgs_per_s": round(n / best["proof"]),
        "jsonschema_rs_is_valid_msgs_per_s": round(rs_n / t_rs),
        "python_jsonschema_msgs_per_s": round(sample / t_oracle),
        "ratio_default_vs_floor": ratio(n / best["default"]),
        "ratio_default_python_loops_vs_floor": ratio(n / best["default_python_loops"]),
        "speedup_compiled_loops_default": round(best["default_python_loops"] / best["default"], 2),
        "ratio_default_exact_path_vs_floor": ratio(n / t_exact),
        "ratio_schema_only_vs_floor": ratio(n / best["schema"]),
        "ratio_tools_pricing_vs_floor": ratio(n / best["rules"]),
        **{f"ratio_jobs{j}_vs_floor": ratio(n / best[f"jobs{j}"]) for j in ROW_JOBS},
        **{f"scaling_jobs{j}_vs_jobs1": round(best["default"] / best[f"jobs{j}"], 2) for j in ROW_JOBS},
        "ratio_process_jobs1_vs_floor": round(t_floor / best["process_jobs1"], 3),
        **{
            f"scaling_process_jobs{j}_vs_jobs1": round(best["process_jobs1"] / best[f"process_jobs{j}"], 2)
            for j in ROW_JOBS
        },
        "ratio_msgspec_decode_vs_floor": ratio(n / t_decode),
        "ratio_proof_vs_floor": ratio(n / best["proof"]),
        "ratio_local_steps_vs_floor": ratio(n / best["local"]),
        "share_proof_of_default": round(best["proof"] / best["default"], 2),
        "share_rules_of_default": round((best["local"] - best["proof"]) / best["default"], 2),
        "share_session_step_of_default": round((best["default"] - best["local"]) / best["default"], 2),
        "ratio_jsonschema_rs_vs_floor": ratio(rs_n / t_rs),
        "ratio_python_jsonschema_vs_floor": ratio(sample / t_oracle, 4),
        "peak_rss_validate_mb": round(rss_mb),
        **{f"peak_rss_validate_jobs{j}_tree_mb": "n/a" if v is None else round(v) for j, v in rss_jobs.items()},
    }
    return rows, best["default"] / n


def _findings(tmp: Path, n: int, repeat: int, t_clean: float) -> dict[str, object]:
    """The findings rows (module doc); `t_clean` is the time of a clean line (plain, default)."""
    empty = tmp / "findings.jsonl"
    empty.write_bytes(b"{}\n" * n)
    distinct = tmp / "distinct.jsonl"
    with distinct.open("wb") as f:
        f.writelines(b'{"n": %d}\n' % i for i in range(n))

    def count_findings(path: Path) -> Callable[[], int]:
        return lambda: sum(1 for _ in iter_validate([path], Options()))

    t_empty, n_empty = _timed(count_findings(empty), repeat)
    t_distinct, n_distinct = _timed(count_findings(distinct), 1)
    rss = _peak_tree_rss_mb(["validate", "-q", "--jobs", "1", str(empty)], ok=(1,))
    return {
        "findings_repeated_per_s": round(n_empty / t_empty),
        "findings_distinct_per_s": round(n_distinct / t_distinct),
        "ratio_finding_repeated_vs_clean_line": round((t_empty / n_empty) / t_clean, 2),
        "ratio_finding_distinct_vs_clean_line": round((t_distinct / n_distinct) / t_clean, 2),
        "peak_rss_validate_q_findings_mb": "n/a" if rss is None else round(rss),
    }


def _commands(tmp: Path, repeat: int) -> dict[str, object]:
    """Start-up and the commands that should answer at once (module doc)."""
    one = tmp / "one.jsonl"
    one.write_bytes(
        b'{"id":"01KR3QB1CHV3NC7DSVSQM8931C","session_id":"s","role":"user","content":[{"type":"text","text":"hi"}],'
        b'"metadata":{},"created_at":"2026-05-08T12:00:02.961534Z","schema_version":1}\n'
    )
    bare = _best_process([sys.executable, "-c", "pass"], repeat * 2)
    version = _best_process(_cli("--version"), repeat * 2)
    one_line = _best_process(_cli("validate", str(one)), repeat * 2)
    example = _best_process(_cli("validate", str(EXAMPLE)), repeat * 2)
    out: dict[str, object] = {
        "startup_bare_python_s": round(bare, 3),
        "startup_version_s": round(version, 3),
        "startup_version_over_bare_s": round(version - bare, 3),
        "startup_validate_one_line_s": round(one_line, 3),
        "startup_validate_one_line_over_bare_s": round(one_line - bare, 3),
        "startup_validate_example_s": round(example, 3),
        "command_rule_s": round(_best_process(_cli("rule", RULE_ID), repeat), 3),
    }
    for target in MODEL_TARGETS:
        dest = tmp / f"models_{target}"
        argv = _cli("models", "--target", target, "--force", str(dest))
        if subprocess.run(argv, capture_output=True, check=False, env=_ENV).returncode != 0:
            out[f"command_models_{target}_s"] = "n/a"  # its generator is not installed (the message says which)
            continue
        out[f"command_models_{target}_s"] = round(_best_process(argv, repeat), 3)
        shutil.rmtree(dest, ignore_errors=True)
    return out


def _targets(result: dict[str, object]) -> dict[str, object]:
    """`target_<figure>`: `<value> (goal >= or <= <goal>: met|missed)` for each of `TARGETS`."""
    out: dict[str, object] = {}
    for key, goal, kind in TARGETS:
        value = result.get(key)
        if not isinstance(value, (int, float)):
            continue
        met = value >= goal if kind == "min" else value <= goal
        out[f"target_{key}"] = f"{value} (goal {'>=' if kind == 'min' else '<='} {goal}: {'met' if met else 'missed'})"
    return out


def run(
    n: int, repeat: int, sample: int, out: Path | None, corpora: tuple[str, ...] = tuple(CORPORA)
) -> dict[str, object]:
    counters = cpu_counters()
    result: dict[str, object] = {
        "load_average_1_5_15_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        # `compiled`, or why the Python loops run (`fast/compiled.py`): the default rows use them
        "compiled_loops": compiled.status(),
    }
    t_clean = 0.0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tools = tmp / "tools.json"
        tools.write_text(json.dumps(TOOLS))
        pricing = tmp / "pricing.yaml"
        pricing.write_text(PRICING_YAML)
        for name in corpora:
            data = tmp / f"{name}.jsonl"
            t0 = time.perf_counter()
            with data.open("wb") as f:
                f.writelines(CORPORA[name](n))
            result[f"{name}_generate_s"] = round(time.perf_counter() - t0, 1)
            rows, clean = _corpus(data, n, repeat, sample, tools, pricing)
            result.update({f"{name}_{k}": v for k, v in rows.items()})
            if name == "plain" or not t_clean:
                t_clean = clean
            data.unlink()
        result.update(_findings(tmp, n, repeat, t_clean))
        result.update(_commands(tmp, repeat))
    from ..strategies import bench as strategies_bench  # function-level: measured after the validation rows

    gen = strategies_bench(seconds=3.0)
    result.update({f"strategies_{k}": round(v, 1) for k, v in gen.items()})
    result["load_average_1_5_15_at_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    result["cpu_steal_share"] = steal_share(counters, cpu_counters())
    result["bench_process_max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    result.update(_targets(result))
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=200_000, help="messages of each corpus")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sample", type=int, default=2_000, help="messages for the python-jsonschema measurement")
    ap.add_argument("--corpus", action="append", choices=list(CORPORA), help="only this corpus (repeatable)")
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    args = ap.parse_args(argv)
    result = run(args.messages, args.repeat, args.sample, args.out, tuple(args.corpus or CORPORA))
    width = max(map(len, result))
    for k, v in result.items():
        sys.stdout.write(f"{k:<{width}}  {v}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
