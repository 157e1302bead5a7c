"""Issue 41: a context whose manifest lists many partitions is read in time linear in the
manifest, with memory that does not hold the transcript, and a stopped conversion leaves
the old output or none.

The properties are counted, never timed: how often a path is resolved (each resolution
`lstat`s every component of the path; three of them per partition made 100,000 partitions
take minutes), how many Python calls a run makes as the manifest grows, and how much
memory a run holds as the entries grow.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tracemalloc
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chibi_helpers import check

from conformance.convert import convert

T0 = 1767225600


def make_context(root: Path, partitions: int, content_bytes: int = 8, *, context_jsonl: bool = True) -> Path:
    """A valid chibi context of `partitions` archived partitions of two entries each (a
    user message and the agent's answer), and a context.jsonl deriving from them."""
    transcript = root / "transcript"
    (transcript / "partitions").mkdir(parents=True)
    metas, entries = [], []
    pad = "x" * max(0, content_bytes - 8)
    for i in range(partitions):
        ts = T0 + 2 * i
        pair = [
            {"id": str(uuid.UUID(int=2 * i + 1)), "timestamp": ts, "from": "alice", "to": "default",
             "content": f"hi {i:04d}{pad}", "entry_type": "message", "role": "user"},
            {"id": str(uuid.UUID(int=2 * i + 2)), "timestamp": ts + 1, "from": "default", "to": "alice",
             "content": f"yo {i:04d}{pad}", "entry_type": "message", "role": "agent"},
        ]  # fmt: skip
        name = f"partitions/{ts}-{ts + 1}.jsonl"
        (transcript / name).write_text("".join(json.dumps(e) + "\n" for e in pair))
        tokens = sum(-(-len(e["content"]) // 3) for e in pair)
        metas.append({"file": name, "start_ts": ts, "end_ts": ts + 1, "entry_count": 2, "prompt_count": 1,
                      "token_count": tokens})  # fmt: skip
        entries += pair
    (transcript / "active.jsonl").write_text("")
    policy = {"max_entries": 2, "max_age_seconds": 86400, "max_tokens": 10**9}
    manifest = {"version": 1, "active_partition": "active.jsonl", "partitions": metas, "rotation_policy": policy}
    (transcript / "manifest.json").write_text(json.dumps(manifest))
    if context_jsonl:  # no anchor in the transcript: chibi starts the window with a fresh one
        anchor = {"id": str(uuid.UUID(int=0)), "timestamp": T0, "from": "system", "to": "default",
                  "content": "Context created", "entry_type": "context_created"}  # fmt: skip
        (root / "context.jsonl").write_text("".join(json.dumps(e) + "\n" for e in [anchor, *entries]))
    return root


def _errors(path: Path) -> list[str]:
    return [f"{f.rule} {f.message}" for f in check(path).findings if f.severity == "error"]


def test_the_generated_context_is_valid(tmp_path: Path) -> None:
    assert _errors(make_context(tmp_path / "ctx", 5)) == []


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every `Path.resolve` call, by path."""
    calls: list[str] = []
    real = Path.resolve

    def counting(self: Path, strict: bool = False) -> Path:
        calls.append(str(self))
        return real(self, strict=strict)

    monkeypatch.setattr(Path, "resolve", counting)
    yield calls


def test_a_partition_costs_no_path_resolution(tmp_path: Path, resolutions: list[str]) -> None:
    """validate and convert resolve the unit's folders once, not each partition's path (it
    was three resolutions per partition, each an lstat per component of the path)."""
    small, large = make_context(tmp_path / "small", 20), make_context(tmp_path / "large", 80)
    counts = {}
    for ctx in (small, large):
        resolutions.clear()
        assert _errors(ctx) == []
        convert("chibi", "canonical", ctx, tmp_path / f"{ctx.name}.jsonl")
        counts[ctx.name] = len(resolutions)
    assert counts["large"] == counts["small"], counts


def _calls(fn: Any) -> int:
    n = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal n
        if event == "call":
            n += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n


def test_the_work_grows_linearly_with_the_manifest(tmp_path: Path) -> None:
    """Python calls made by validate and by convert, for a manifest 4 times longer: 4 times
    as many, within 10% (a step quadratic in the partitions would make it 16)."""
    ctxs = {n: make_context(tmp_path / f"c{n}", n) for n in (40, 160)}
    check(ctxs[40])  # schemas compiled, modules imported: not counted in either run
    work = {n: _calls(lambda c=c: check(c)) for n, c in ctxs.items()}
    assert work[160] / work[40] <= 4 * 1.1, work
    conv = {
        n: _calls(lambda c=c, n=n: convert("chibi", "canonical", c, tmp_path / f"o{n}.jsonl")) for n, c in ctxs.items()
    }
    assert conv[160] / conv[40] <= 4 * 1.1, conv


def _peak(fn: Any) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_validate_holds_no_entry_of_the_transcript(tmp_path: Path) -> None:
    """What validate keeps while it reads 200 partitions is the same whether each entry holds
    8 bytes or 4 KB of content: the entries context.jsonl must repeat are kept as digests
    (the whole transcript was held in memory, ~1.6 MB more here)."""
    thin = make_context(tmp_path / "thin", 200, 8)
    fat = make_context(tmp_path / "fat", 200, 4096)
    assert _errors(thin) == [] and _errors(fat) == []
    grown = _peak(lambda: check(fat)) - _peak(lambda: check(thin))
    assert grown < 256 * 1024, grown  # a few entries in flight, never 400 of them


# -- a stopped conversion leaves the old output or none ---------------------------------------

STOPPER = """
import os, sys, time
from pathlib import Path
from conformance.cli import main
from conformance.formats.chibi import convert as chibi_convert

write = chibi_convert._write_lines

def stalled(path, values):
    write(path, values)  # the output is being built in its staging folder: now stop us
    print("writing", flush=True)
    time.sleep(60)

chibi_convert._write_lines = stalled
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)])
@pytest.mark.parametrize("force", [False, True])
def test_a_stopped_convert_leaves_the_old_output_or_none(tmp_path: Path, sig: int, code: int, force: bool) -> None:
    """SIGTERM or SIGINT while the output is being written: the destination holds the old
    output (with --force) or nothing, and the staging folder is gone with the process (a
    SIGTERM ended it before its clean-up ran)."""
    ctx = make_context(tmp_path / "ctx", 5)
    out = tmp_path / "out.jsonl"
    if force:
        out.write_text("old\n")
    argv = ["convert", "--from", "chibi", "--to", "canonical", *(["--force"] if force else []), str(ctx), str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", STOPPER, *argv], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
        child.send_signal(sig)
        assert child.wait(timeout=30) == code
    finally:
        child.kill()
        child.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == (["ctx", "out.jsonl"] if force else ["ctx"])
    if force:
        assert out.read_text() == "old\n"
