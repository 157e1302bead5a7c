"""`nox -s bench`: validate throughput as a ratio of the orjson parse floor, one process.

Everything is measured in the same run on the same generated file, so the ratios are
comparable across machines even when the absolute numbers are not:

- floor: read the JSONL line by line and `orjson.loads` each line, nothing else;
- validate (schema only): `turnspec validate --select TS0` (reading, strict JSON parse
  with duplicate-key detection, schema by version, tolerance warnings);
- validate (all rules): every rule, plus `--tools` and `--pricing` so TS3xx/TS4xx run;
- python-jsonschema: the reference oracle alone, on a sample (it is ~100x slower);
- strategies: valid canonical messages generated per second from the schemas
  (`conformance.strategies.bench`; target >= 1,000/s).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from .api import iter_validate
from .findings import Selection
from .formats import Options
from .schema_validation import SchemaValidator
from .schemas import schema_set
from .synthetic import PRICING_YAML, jsonl_lines

TOOLS = [
    {"name": n, "description": n, "side_effects": "read",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["path"]}}
    for n in ("read_file", "search_code", "run_tests")
]  # fmt: skip


def _timed(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - t0)
    return best, count


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

        def validate_with(options: Options) -> Callable[[], int]:
            def go() -> int:
                findings = list(iter_validate([data], options))
                if any(x.severity == "error" for x in findings):
                    raise SystemExit(f"benchmark corpus is not valid: {findings[:3]}")
                return n

            return go

        t_floor, k = _timed(floor, repeat)
        assert k == n
        t_schema, _ = _timed(validate_with(Options(selection=Selection(select=("TS0",)))), repeat)
        t_rules, _ = _timed(validate_with(Options(tools=tools, pricing=pricing)), repeat)
        validator = SchemaValidator(schema_set("canonical", "v1"), "message.json")
        with data.open("rb") as fh:
            docs = [orjson.loads(next(fh)) for _ in range(sample)]
        t_oracle, _ = _timed(lambda: sum(validator.oracle_is_valid(d) for d in docs), 1)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from .strategies import bench as strategies_bench  # function-level: measured after the validation rows

    gen = strategies_bench(seconds=3.0)
    floor_rate = n / t_floor
    result: dict[str, object] = {
        "messages": n,
        "file_mb": round(size / 1e6, 1),
        "avg_message_bytes": round(size / n),
        "generate_s": round(gen_s, 1),
        "floor_orjson_msgs_per_s": round(floor_rate),
        "validate_schema_only_msgs_per_s": round(n / t_schema),
        "validate_all_rules_msgs_per_s": round(n / t_rules),
        "python_jsonschema_msgs_per_s": round(sample / t_oracle),
        "ratio_schema_only_vs_floor": round(floor_rate and (n / t_schema) / floor_rate, 3),
        "ratio_all_rules_vs_floor": round((n / t_rules) / floor_rate, 3),
        "ratio_python_jsonschema_vs_floor": round((sample / t_oracle) / floor_rate, 4),
        "max_rss_mb": round(rss_mb),
        **{f"strategies_{k}": round(v, 1) for k, v in gen.items()},
    }
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=2)
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
