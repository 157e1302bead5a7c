"""The bench's own rows measure what they say (`nox -s bench`; no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.benchmarks.realistic import agent_jsonl_lines
from conformance.benchmarks.validate import _local, _proof, cpu_counters, steal_share


def test_the_proof_row_proves_every_block_of_a_valid_corpus(tmp_path: Path) -> None:
    data = tmp_path / "agents.jsonl"
    data.write_bytes(b"".join(agent_jsonl_lines(2_000)))
    blocks = _proof(data)()
    assert blocks >= data.stat().st_size // (1 << 18)  # one per 256 KiB read, at least


def test_the_proof_row_stops_on_a_block_the_fast_path_cannot_prove(tmp_path: Path) -> None:
    lines = list(agent_jsonl_lines(50))
    # a duplicate key: the re-encoding differs from the input, so the block is not proven at once
    lines[10] = lines[10].replace(b'{"id":', b'{"id":"x","id":', 1)
    data = tmp_path / "dup.jsonl"
    data.write_bytes(b"".join(lines))
    with pytest.raises(SystemExit, match="cannot prove"):
        _proof(data)()


def test_the_local_row_runs_the_local_steps_over_every_line(tmp_path: Path) -> None:
    """`local` counts the lines its blocks held (the default row less the session step):
    every line of the corpus, also when one of them takes the exact path."""
    lines = list(agent_jsonl_lines(2_000))
    data = tmp_path / "agents.jsonl"
    data.write_bytes(b"".join(lines))
    assert _local(data)() == len(lines)
    lines[10] = b"{}\n"  # no schema to speak of: left for the exact path, still counted
    data.write_bytes(b"".join(lines))
    assert _local(data)() == len(lines)


def test_the_steal_share_is_the_hosts_part_of_the_cpu_time_between_two_readings(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 0 0 0 50 0 0\ncpu0 1 2 3\n")
    before = cpu_counters(stat)
    assert before == (50, 1000)
    stat.write_text("cpu  170 0 70 930 0 0 0 130 7 0\n")  # 300 ticks more, 80 of them stolen (guest: in user)
    assert steal_share(before, cpu_counters(stat)) == round(80 / 300, 3)
    assert steal_share(before, before) == "n/a"  # no time went by
    stat.write_text("intr 1 2 3\n")
    assert cpu_counters(stat) is None
    assert cpu_counters(tmp_path / "missing") is None
    assert steal_share(None, before) == "n/a"
