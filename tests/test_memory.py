"""Memory bounds (issue 30 item 8), each measured as the peak RSS of a child process.

- Per open session: `validate` keeps, per session id it has seen, only what the session
  rules read (the last id and time, the open tool calls). The per-session growth of the
  peak RSS between two runs that differ only in how many one-message sessions they hold
  stays below `SESSION_BYTES_BOUND` (README "Memory:"); it was about 1,000 bytes.
- YAML: a flow-style document is a node per two bytes; the readers (`conformance.core.yamlio`
  for price tables, the geppetto reader) refuse more than a million nodes, with the
  line, so a 10 MiB `{a: [ab, ab, ...]}` is refused within `YAML_RSS_BOUND_MB` (it took
  about 350 MB through `yamlio.load` and 800 MB through the geppetto reader).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conformance.benchmarks.synthetic import messages
from conformance.core import ids
from conformance.core.convertkit import rfc3339

ROOT = Path(__file__).resolve().parents[1]

# measured near 240 (a dict entry, the session id, a slotted object, the packed last
# message); it was about 1,000
SESSION_BYTES_BOUND = 400

# The child's own peak: VmHWM starts again at exec, where ru_maxrss keeps the forking
# parent's (a pytest of the whole suite, some 350 MB).
_HWM = (
    "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM:')][0].split()[1]\n"
    "sys.stderr.write(f'maxrss_kb={hwm}\\n')\n"
)

_RSS_CHILD = "import sys\nfrom conformance.cli import main\nrc = main(sys.argv[1:])\n" + _HWM + "sys.exit(rc)\n"


def _peak_rss_kb(args: list[str]) -> tuple[int, str]:
    """The peak RSS (KiB) of a child running `turnspec ARGS`, and its stdout."""
    r = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    return int(r.stderr.rsplit("maxrss_kb=", 1)[1].split()[0]), r.stdout


def _one_message_sessions(path: Path, n: int) -> None:
    """`n` valid one-message sessions: one synthetic message, its id, session id and
    time made fresh for each (ids increase, so the file is valid whole)."""
    template = next(messages(1, seed=5, session_len=1))
    t0 = 1_778_241_600_000_000
    with path.open("wb") as f:
        for k in range(n):
            micros = t0 + k * 1000
            template["id"] = ids.encode(((micros // 1000) << 80) | k)
            template["session_id"] = f"sess_{k:08x}"
            template["created_at"] = rfc3339(micros)
            f.write(orjson.dumps(template) + b"\n")


def test_session_state_grows_by_tens_of_bytes_per_session(tmp_path: Path) -> None:
    small, large = 20_000, 120_000
    rss: list[int] = []
    for n in (small, large):
        data = tmp_path / f"s{n}.jsonl"
        _one_message_sessions(data, n)
        kb, out = _peak_rss_kb(["validate", "-q", "-j1", "--ignore", "TS202,TS207", str(data)])
        assert f"0 error(s), 0 warning(s) in 1 file(s), {n} record(s)" in out, out
        data.unlink()
        rss.append(kb)
    per_session = (rss[1] - rss[0]) * 1024 / (large - small)
    assert per_session < SESSION_BYTES_BOUND, f"{per_session:.0f} bytes per session ({rss} KiB)"


YAML_RSS_BOUND_MB = {"yamlio": 220, "geppetto": 400}  # measured near 140 and 270 (with the 10 MiB text read)

_YAML_CHILD = {
    "yamlio": (
        "from conformance.core.yamlio import YamlError, load\n"
        "try:\n"
        "    load(open(sys.argv[1], encoding='utf-8').read())\n"
        "    print('loaded')\n"
        "except YamlError as exc:\n"
        "    print(exc)\n"
    ),
    "geppetto": (
        "from conformance.formats.geppetto.yamlio import read_yaml\n"
        "for item in read_yaml(sys.argv[1], max_bytes=64 << 20):\n"
        "    print(getattr(item, 'message', 'loaded'))\n"
    ),
}


@pytest.mark.parametrize("reader", sorted(_YAML_CHILD))
def test_a_dense_flow_style_yaml_is_refused_in_bounded_memory(tmp_path: Path, reader: str) -> None:
    data = tmp_path / "dense.yaml"
    n = 10 * 1024 * 1024 // 4
    data.write_text("{a: [" + "ab, " * n + "ab]}\n", encoding="utf-8")
    code = "import sys\n" + _YAML_CHILD[reader] + _HWM
    r = subprocess.run(
        [sys.executable, "-c", code, str(data)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "more than 1000000 nodes; refused" in r.stdout, r.stdout[-500:]
    rss_kb = int(r.stderr.rsplit("maxrss_kb=", 1)[1].split()[0])
    assert rss_kb < YAML_RSS_BOUND_MB[reader] * 1024, f"peak RSS {rss_kb // 1024} MB"
