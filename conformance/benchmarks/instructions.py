"""`nox -s bench_instructions`: the ratios of `nox -s bench` in instructions, not seconds.

On a machine shared with other work the wall clock of a row swings by 2x between runs;
the number of instructions a run executes does not. Each figure here is counted by
valgrind's callgrind (`valgrind` must be installed), so two runs, or two commits, compare
to the instruction:

- per corpus (`plain`, `agents`: the corpora of `nox -s bench`, `--messages` each), the
  instructions per message of the orjson parse floor and of `validate` (default rules,
  and tools + pricing) in one process, after a warm-up on a small file, and their ratio
  (a run over the corpus less a run over the warm-up file, per message more: what a
  run costs whatever its size, such as reading `--tools`, is not a message's);
- per command, the instructions of a whole process (compiled bytecode, as installed):
  `python -c pass`, `turnspec --version`, `validate` of a one-line file, `rule TS202`.

Instructions are not time: a parse loop in C retires more per nanosecond than the
interpreter does, so a ratio here reads higher than the same ratio in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .realistic import agent_jsonl_lines
from .synthetic import PRICING_YAML, TOOLS, jsonl_lines
from .validate import _CLI, _ENV

# the children's dict and set layouts fixed: with a random hash seed the floor's own count
# moves by up to 2% between runs
_COUNT_ENV = {**_ENV, "PYTHONHASHSEED": "0"}

# the measured region: a call through functools.reduce, which nothing else calls
_CHILD = """
import functools, sys
from pathlib import Path
import orjson
from conformance.api import iter_validate
from conformance.formats import Options
mode, data, warm, tools, pricing = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5])
if len(sys.argv) > 6:  # the measured run over the warm-up file: what a run costs whatever its size
    data = warm
options = Options(tools=tools, pricing=pricing) if mode == "rules" else Options()
list(iter_validate([warm], options))
def floor(_a, _b):
    with data.open("rb") as f:
        for line in f:
            orjson.loads(line)
    return 0
def run(_a, _b):
    list(iter_validate([data], options))
    return 0
functools.reduce(floor if mode == "floor" else run, [0, 0])
"""
_COLLECTED = re.compile(r"Collected : (\d+)")
_WARM = 50  # messages of the warm-up file


def _count(argv: list[str], region: bool) -> int:
    """Instructions of `argv` (a python command line): the whole process, or (`region`)
    the call through functools.reduce alone."""
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    if region:
        vg += ["--collect-atstart=no", "--toggle-collect=functools_reduce"]
    done = subprocess.run([*vg, *argv], capture_output=True, text=True, env=_COUNT_ENV, check=False)
    m = _COLLECTED.search(done.stderr)
    if done.returncode not in (0, 1) or m is None:
        raise SystemExit(f"{' '.join(argv)}: valgrind failed: {done.stderr[-500:]}")
    return int(m.group(1))


def run(n: int) -> dict[str, object]:
    result: dict[str, object] = {"messages_per_corpus": n}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tools, pricing = tmp / "tools.json", tmp / "pricing.yaml"
        tools.write_text(json.dumps(TOOLS))
        pricing.write_text(PRICING_YAML)
        for name, lines in (("plain", jsonl_lines), ("agents", agent_jsonl_lines)):
            data, warm = tmp / f"{name}.jsonl", tmp / f"{name}-warm.jsonl"
            data.write_bytes(b"".join(lines(n, seed=2026)))
            warm.write_bytes(b"".join(lines(_WARM, seed=7)))
            child = [sys.executable, "-c", _CHILD]
            per = {}
            for mode in ("floor", "default", "rules"):
                args = [mode, str(data), str(warm), str(tools), str(pricing)]
                # per message: a run over the corpus less a run over the 50 warm-up messages
                # (reading --tools and --pricing, building the run: not a message's cost)
                per[mode] = (_count([*child, *args], True) - _count([*child, *args, "warm"], True)) / (n - _WARM)
            result[f"{name}_floor_instructions_per_msg"] = round(per["floor"])
            result[f"{name}_default_instructions_per_msg"] = round(per["default"])
            result[f"{name}_tools_pricing_instructions_per_msg"] = round(per["rules"])
            result[f"{name}_ratio_default_vs_floor"] = round(per["floor"] / per["default"], 3)
            result[f"{name}_ratio_tools_pricing_vs_floor"] = round(per["floor"] / per["rules"], 3)
        one = tmp / "one.jsonl"
        one.write_bytes(b"".join(jsonl_lines(1, seed=1)))
        commands = {"bare_python": ["-c", "pass"], "version": ["-c", _CLI, "--version"],
                    "validate_one_line": ["-c", _CLI, "validate", str(one)], "rule": ["-c", _CLI, "rule", "TS202"]}  # fmt: skip
        for label, args in commands.items():
            subprocess.run([sys.executable, *args], capture_output=True, env=_COUNT_ENV, check=False)  # bytecode cached
            result[f"startup_{label}_minstructions"] = round(_count([sys.executable, *args], False) / 1e6)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=4_000, help="messages of each corpus (valgrind is ~50x slower)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.stderr.write("bench_instructions: valgrind is not installed\n")
        return 2
    result = run(args.messages)
    result["load_average_1_5_15"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    width = max(map(len, result))
    for k, v in result.items():
        sys.stdout.write(f"{k:<{width}}  {v}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
