"""`--jobs` workers run the fast path's local steps; the report stays the sequential one.

Three engines are compared on the fast path's broken corpora, report bytes for bytes:
the sequential exact path (`Options(exact=True)`, which shares no code with the fast
path), the sequential fast path, and the task engine (byte ranges, tiny chunks so that
boundaries fall inside sessions, tool pairs and lines) whose workers clear lines with
the fast path and send `Batch`es and `SessionItem`s to the parent. Each comparison also
checks that the workers did clear lines (results holding `"b"` or `"s"` items), so a regression that sends
every line down the exact local phase fails here instead of passing silently.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from conformance.api import Report, expand, validate
from conformance.benchmarks.synthetic import messages
from conformance.core.findings import Selection
from conformance.formats import Options
from conformance.formats.canonical import CanonicalRun
from conformance.formats.canonical.fast import Batch, Pairs, SessionItem, pair_tools
from conformance.formats.canonical.invariants import parse_created_at
from conformance.parallel import chunks
from conformance.parallel.chunks import (
    BATCH_FIELDS,
    Joined,
    LazyTools,
    Task,
    decode_batch,
    decode_item,
    encode_batch,
    encode_item,
    plan,
    run_task,
)
from conformance.parallel.engine import validate_units
from tests.test_fast_path import PRICING, SELECTIONS, TOOLS, broken_corpus, sides  # noqa: F401 (a fixture)


def report(paths: list[Path], options: Options, *, chunk_bytes: int | None = None) -> bytes:
    """The whole JSON report: sequential (`chunk_bytes` None) or the task engine in this
    process with ranges of `chunk_bytes`."""
    if chunk_bytes is None:
        return orjson.dumps(validate(paths, options, jobs=1).as_dict())
    r = Report()
    skipped: list[Path] = []
    units = expand(paths, None, skipped, r.problems)
    for f in validate_units(units, options, jobs=1, chunk_bytes=chunk_bytes, files=r.files, problems=r.problems):
        r.add(f)
    r.skipped = [str(p) for p in skipped]
    return orjson.dumps(r.as_dict())


def kinds(path: Path, options: Options, chunk_bytes: int) -> dict[str, int]:
    """How many lines of each result kind the tasks of `path` return (a `["n", count,
    bytes]` result stands for `count` cleared lines, a `["b", ...]` batch for its messages)."""
    run = CanonicalRun(options, revisions=options.revisions or None)
    out: dict[str, int] = {}
    for task in plan(str(path), path.stat().st_size, True, chunk_bytes):
        for item in orjson.loads(run_task(task, options, run=run))["items"]:
            out[item[0]] = out.get(item[0], 0) + (item[1] if item[0] == "n" else len(item[3]) if item[0] == "b" else 1)
    return out


def three_ways(path: Path, options: Options, chunk_bytes: int) -> bytes:
    exact = report([path], Options(**{**options.__dict__, "exact": True}))
    fast = report([path], options)
    parallel = report([path], options, chunk_bytes=chunk_bytes)
    assert fast == exact
    assert parallel == exact
    return exact


def _write(tmp: Path, lines: list[bytes], name: str = "c.jsonl") -> Path:
    p = tmp / name
    p.write_bytes(b"".join(x if x.endswith(b"\n") else x + b"\n" for x in lines))
    return p


@pytest.mark.parametrize("sel", SELECTIONS, ids=lambda s: f"{s.select}-{s.ignore}-{s.strict}")
def test_broken_corpus_three_ways_under_every_selection(tmp_path: Path, sel: Selection) -> None:
    p = _write(tmp_path, broken_corpus(300, seed=13))
    three_ways(p, Options(selection=sel), chunk_bytes=997)
    k = kinds(p, Options(selection=sel), 997)
    # lines the workers' fast path cleared: as batches or session items, or counted (no session rule)
    assert k.get("b", 0) + k.get("s", 0) + k.get("n", 0) > 150
    lean = CanonicalRun(Options(selection=sel)).fast
    assert lean is not None and ("n" in k) == lean.lean


@pytest.mark.parametrize("rev", [(), ("v2",)])
def test_broken_corpus_three_ways_with_tools_pricing_revisions(
    tmp_path: Path,
    rev: tuple[str, ...],
    sides: dict[str, Path],  # noqa: F811 (the fixture)
) -> None:
    p = _write(tmp_path, broken_corpus(300, seed=29, rate=0.3))
    for options in (
        Options(revisions=rev, tools=sides["tools"], pricing=sides["pricing"]),
        Options(revisions=rev, tools=TOOLS, pricing=PRICING),  # other tables: TS304, TS402, TS403 ...
    ):
        for chunk in (389, 4099):
            three_ways(p, options, chunk_bytes=chunk)
    k = kinds(p, Options(revisions=rev, tools=sides["tools"], pricing=sides["pricing"]), 389)
    assert k.get("b", 0) + k.get("s", 0) > 100


@pytest.mark.parametrize("seed", range(3))
def test_random_cuts_of_a_broken_corpus(tmp_path: Path, seed: int) -> None:
    """Ranges from 1 byte up: boundaries fall before, inside and after every kind of line."""
    lines = broken_corpus(60, seed=100 + seed, rate=0.4)
    r = random.Random(seed)
    p = _write(tmp_path, lines)
    for chunk in (1, r.randint(2, 300), r.randint(300, 3000)):
        three_ways(p, Options(), chunk_bytes=chunk)


def _session_lines() -> tuple[list[bytes], dict[str, int]]:
    """One session's messages with the session rules' preconditions broken across lines
    that are each cleared locally: an id lower than the message before it (TS203), a
    created_at earlier than the one before (TS204), a message id seen before (TS202), a
    tool_use id seen before (TS207). Returns the lines and the line (1-based) of each."""
    docs = list(messages(40, seed=7, session_len=40))
    use = next(i for i, d in enumerate(docs) if any(b.get("type") == "tool_use" for b in d["content"]))
    out = [orjson.dumps(d) for d in docs]
    where: dict[str, int] = {}
    # TS203: swap two neighbours after the tool use
    i = use + 3
    out[i], out[i + 1] = out[i + 1], out[i]
    where["TS203"] = i + 2
    # TS204: a later message with the created_at of the first message
    late = copy.deepcopy(docs[i + 6])
    late["created_at"] = docs[0]["created_at"]
    out[i + 6] = orjson.dumps(late)
    where["TS204"] = i + 7
    # TS202 and TS207: the message holding the tool_use, again, near the end
    out.insert(len(out) - 2, orjson.dumps(docs[use]))
    where["TS202"] = len(out) - 2
    return out, where


@pytest.mark.parametrize("chunk_bytes", [1, 211, 1500])
def test_a_session_rule_fails_on_a_cleared_line_in_another_chunk(tmp_path: Path, chunk_bytes: int) -> None:
    """The worker clears each of these lines (no local finding); the parent's fast
    session step refuses them (their previous message sits in an earlier chunk) and the
    exact session phase reports, at the file's line numbers."""
    lines, where = _session_lines()
    p = _write(tmp_path, lines)
    options = Options()
    got = orjson.loads(three_ways(p, options, chunk_bytes))
    found = {(f["rule"], f["line"]) for f in got["violations"]}
    for rule, line in where.items():
        assert (rule, line) in found, (rule, line, sorted(found))
    assert ("TS207", where["TS202"]) in found
    # each of those lines was cleared by its task (a batch of one): the parent decided
    offsets = [0]
    for x in lines:
        offsets.append(offsets[-1] + len(x) + 1)
    for line in where.values():
        start = offsets[line - 1]
        doc = orjson.loads(run_task(Task(str(p), start, start + 1), options))
        assert [it[0] for it in doc["items"]] == ["b"]


def test_the_fast_session_step_commits_nothing_when_it_refuses(tmp_path: Path) -> None:
    run = CanonicalRun(Options())
    fast = run.fast
    assert fast is not None
    tid = "tu_01KR3QAYG2TA8P4VHWVDGA4SNR"
    t0, t1 = "2026-01-01T00:00:01Z", "2026-01-01T00:00:00Z"

    def item(
        mid: str,
        created: str,
        tools: list[tuple[int, bool, str]],
        sid: str = "s1",
        role: str = "assistant",
        status: str = "complete",
    ) -> SessionItem:
        complete = status == "complete"
        return SessionItem(1, mid, sid, created, parse_created_at(created), complete, tools, role, status, 10)

    assert fast.session("p", item("01KR3QAZNK2K8Y5YDR6M5FMBT1", t0, [(0, True, tid)]))
    refused = [
        item("01KR3QAZNK2K8Y5YDR6M5FMBT1", t0, []),  # id seen (TS202)
        item("01KR3QAZNK2K8Y5YDR6M5FMBT0", t0, []),  # id not increasing (TS203)
        item("01KR3QAZNK2K8Y5YDR6M5FMBT2", t1, []),  # created_at going back (TS204)
        item("01KR3QAZNK2K8Y5YDR6M5FMBT2", t0, [(0, True, tid)]),  # tool id taken (TS207)
        item("01KR3QAZNK2K8Y5YDR6M5FMBT2", t0, [(0, False, "tu_other")]),  # no such use (TS205)
        item("01KR3QAZNK2K8Y5YDR6M5FMBT2", t0, [(0, False, tid), (1, False, tid)]),  # answered twice (TS206)
        item("01KR3QAZNK2K8Y5YDR6M5FMBT2", t0, [(0, False, tid)], sid="s2"),  # other session (TS205)
        item("01KR3QAZNK2K8Y5YDR6M5FMBT2", t0, [(0, True, "tu_x"), (1, True, "tu_x")]),  # twice in one (TS207)
    ]
    for it in refused:
        before = copy.deepcopy(run.state)
        assert not fast.session("p", it)
        assert run.state == before
    assert fast.session("p", item("01KR3QAZNK2K8Y5YDR6M5FMBT2", t0, [(0, False, tid)]))
    assert run.state.sessions["s1"].answered == {tid}
    # streaming §6.3: after a cancelled assistant message, the next assistant one (TS209)
    assert fast.session("p", item("01KR3QAZNK2K8Y5YDR6M5FMBT3", t0, [], status="cancelled"))
    before = copy.deepcopy(run.state)
    assert not fast.session("p", item("01KR3QAZNK2K8Y5YDR6M5FMBT4", t0, []))
    assert run.state == before
    assert fast.session("p", item("01KR3QAZNK2K8Y5YDR6M5FMBT4", t0, [], sid="s2"))  # another session's turn
    assert fast.session("p", item("01KR3QAZNK2K8Y5YDR6M5FMBT5", t0, [], role="user"))  # a fresh turn
    assert fast.session("p", item("01KR3QAZNK2K8Y5YDR6M5FMBT6", t0, []))
    assert run.state.after_cancel == {}


def test_the_item_codec_carries_every_field() -> None:
    at = "2026-01-01T00:00:00.123+00:00"
    tools = [(0, True, "a"), (3, False, "b")]
    it = SessionItem(7, "01A", "s", at, parse_created_at(at), False, tools, "assistant", "cancelled", 1234)
    data: list[Any] = orjson.loads(orjson.dumps(encode_item(it)))
    back = decode_item(data, 7)
    assert back == it
    assert decode_item(data, 99).line == 99
    # a created_at that is no real date travels as text and parses to None again
    bad = SessionItem(1, "01A", "s", "2026-02-30T00:00:00Z", None, True, [], "user", "complete", 5)
    assert decode_item(orjson.loads(orjson.dumps(encode_item(bad))), 1) == bad
    # a batch: every column, its order facts, its tool blocks (as lists), its times parsed on demand
    created = ["2026-01-01T00:00:00.000001Z", "2026-01-01T00:00:01.000001Z", "2026-01-01T00:00:02.000001Z"]
    ats = [parse_created_at(c) for c in created]
    roles = ["user", "assistant", "system"]
    batch = Batch(
        5, ["01A", "01B", "01C"], ["s", "s", "t"], created, ats, {1: [(0, True, "tu_1")]}, roles, 300, [2], True
    )
    got = decode_batch(orjson.loads(orjson.dumps(encode_batch(batch))), 9)
    assert (got.first, got.ids, got.sids, list(got.created), got.size, got.cuts, got.ordered) == (
        9,
        batch.ids,
        batch.sids,
        created,
        300,
        [2],
        True,
    )
    as_lists: Any = {1: [[0, True, "tu_1"]]}  # JSON gives the blocks back as lists
    assert got.tools == as_lists and got.ats is None
    assert [got.at(k) for k in range(3)] == ats
    assert got.item(1) == SessionItem(10, "01B", "s", created[1], ats[1], True, got.tools[1], "assistant", "complete")
    assert [got.item(k).role for k in range(3)] == roles  # the roles travel as their initials
    assert got.pairs is None
    assert tuple(f.name for f in dataclasses.fields(Batch)) == BATCH_FIELDS
    # with its tool blocks paired within the batch (`pair_tools`)
    tools = {0: [(1, True, "tu_1"), (2, True, "tu_2")], 1: [(0, False, "tu_1"), (1, False, "tu_0")]}
    pairs = pair_tools(tools, ["s", "s", "t"])
    assert pairs == Pairs(["tu_1", "tu_2"], [0, 0], [(1, "tu_0")], {"s": ["tu_1"]}, [(0, 2, "tu_2")])
    batch.pairs = pairs
    got = decode_batch(orjson.loads(orjson.dumps(encode_batch(batch))), 9)
    assert got.pairs is not None
    p = got.pairs
    assert (p.uses, p.use_at, p.inside) == (pairs.uses, pairs.use_at, pairs.inside)
    assert [tuple(x) for x in p.outside] == pairs.outside and [tuple(x) for x in p.still_open] == pairs.still_open
    # session ids travel once per run, times of one width as one string; others as lists
    runs = Batch(
        1,
        ["a", "b", "c", "d", "e"],
        ["s", "s", "t", "u", "u"],
        ["1", "22", "1", "1", "1"],
        None,
        {},
        "uatsu",
        5,
        [2, 3],
        True,
    )
    wire = orjson.loads(orjson.dumps(encode_batch(runs)))
    assert wire[4] == ["s", "t", "u"] and wire[5] == ["1", "22", "1", "1", "1"]
    back = decode_batch(wire, 1)
    assert back.sids == runs.sids and list(back.created) == runs.created
    runs.created = ["2026", "2027", "2028", "2029", "2030"]
    wire = orjson.loads(orjson.dumps(encode_batch(runs)))
    assert wire[5] == "20262027202820292030"
    assert list(decode_batch(wire, 1).created) == runs.created


def test_tool_blocks_travel_as_text_read_when_asked() -> None:
    """To another process, a batch's tool blocks go as JSON text when their pairs do
    (`LazyTools`), read only if the session step asks; as lists otherwise."""
    tools = {0: [(1, True, "tu_1"), (2, True, "tu_2")], 1: [(0, False, "tu_1"), (1, False, "tu_0")]}
    batch = Batch(
        5, ["01A", "01B"], ["s", "s"], ["t1", "t2"], None, tools, "ua", 10, [], True, pair_tools(tools, ["s", "s"])
    )
    wire = orjson.loads(orjson.dumps(encode_batch(batch, wire=True)))
    assert type(wire[6]) is str
    got = decode_batch(wire, 5)
    assert isinstance(got.tools, LazyTools) and got.tools._got is None  # not read yet
    assert dict(got.tools.items()) == {
        0: [[1, True, "tu_1"], [2, True, "tu_2"]],
        1: [[0, False, "tu_1"], [1, False, "tu_0"]],
    }
    assert got.item(1).tools == [[0, False, "tu_1"], [1, False, "tu_0"]] and got.tools.get(7) is None
    # in this process, or with no pairs, they stay lists
    assert type(encode_batch(batch)[6]) is list
    batch.pairs = None
    assert type(encode_batch(batch, wire=True)[6]) is list
    # text where there are no pairs, or text that is not the blocks: damaged
    wire[9] = None
    with pytest.raises(ValueError, match="damaged"):
        decode_batch(wire, 5)
    for text in ('{"0": 1}', "[[0]]", "[1, 2]"):
        with pytest.raises(ValueError, match="damaged"):
            dict(LazyTools(text))


def test_joined_strings_read_as_a_sequence() -> None:
    j = Joined("aaabbbccc", 3)
    assert len(j) == 3 and list(j) == ["aaa", "bbb", "ccc"] and j[-1] == "ccc" and j[1:] == ["bbb", "ccc"]
    assert "bbb" in j and "bb" not in j
    with pytest.raises(IndexError):
        j[3]
    with pytest.raises(IndexError):
        j[-4]
    for text, n in (("aaab", 3), ("", 0), ("abc", -1)):
        with pytest.raises(ValueError, match="damaged"):
            Joined(text, n)


@pytest.mark.parametrize(
    "damage",
    [
        lambda w: w.__setitem__(4, w[4][:1]),  # a run without its session id
        lambda w: w.__setitem__(4, [*w[4], "x"]),  # a session id too many
        lambda w: w.__setitem__(7, [3, 2]),  # cuts out of order
        lambda w: w.__setitem__(7, [2, 5]),  # a cut past the end
        lambda w: w.__setitem__(5, "2026202720282029203"),  # times cut unevenly
        lambda w: w.__setitem__(5, ["2026"]),  # times missing
        lambda w: w.__setitem__(8, "yes"),  # not a flag
        lambda w: w.__setitem__(10, "uats"),  # a role short
        lambda w: w.__setitem__(10, "uatsx"),  # no role
        lambda w: w.__setitem__(10, list("uatsu")),  # not one string
    ],
)
def test_a_damaged_batch_is_refused(damage: Any) -> None:
    runs = Batch(
        1,
        ["a", "b", "c", "d", "e"],
        ["s", "s", "t", "u", "u"],
        ["2026", "2027", "2028", "2029", "2030"],
        None,
        {},
        ["user", "assistant", "tool", "system", "user"],
        5,
        [2, 3],
        True,
    )
    wire = orjson.loads(orjson.dumps(encode_batch(runs)))
    decode_batch(wire, 1)  # whole: fine
    damage(wire)
    with pytest.raises(ValueError, match="damaged"):
        decode_batch(wire, 1)


@pytest.mark.parametrize("seed", range(4))
def test_range_reads_own_the_lines_that_begin_in_them(tmp_path: Path, seed: int) -> None:
    """`_Range.read` (the fast path's reader) cuts where `_Range.readline` does: the
    ranges' reads, one after the other, give back the file, whatever the read size."""
    r = random.Random(seed)
    lines = [b"x" * r.randint(0, 40) + b"\n" for _ in range(60)]
    if seed % 2:
        lines[-1] = lines[-1].rstrip(b"\n")  # no final newline
    p = tmp_path / "r.jsonl"
    data = b"".join(lines)
    p.write_bytes(data)
    for chunk in (1, 7, r.randint(8, 200), len(data)):
        for size in (1, 3, 64, 1 << 16):
            got = b""
            newlines = 0
            for task in plan(str(p), len(data), True, chunk):
                with p.open("rb") as f:
                    reader = chunks._Range(f, task.start, task.end, synthetic=False)
                    part = b""
                    while block := reader.read(size):
                        part += block
                    with p.open("rb") as g:
                        by_line = chunks._Range(g, task.start, task.end, synthetic=False)
                        assert part == b"".join(iter(by_line.readline, b""))
                    newlines += reader.newlines
                    got += part
            assert got == data
            assert newlines == data.count(b"\n")


def test_a_small_run_loads_neither_the_task_engine_nor_yaml() -> None:
    """Startup (issue 13): `turnspec validate` on the bundled example, with the default
    `--jobs` (the cores), is too small to share, so it stays in this process without
    importing the task engine, multiprocessing or PyYAML (only --pricing reads YAML)."""
    import subprocess  # function-level import: only this test starts a process
    import sys

    example = Path(__file__).parent.parent / "conformance" / "data" / "examples"
    code = (
        "import sys\nfrom conformance.cli import main\n"
        f"try:\n    main(['validate', '--jobs', '2', {str(example)!r}])\nexcept SystemExit:\n    pass\n"
        "print('MODULES:', *sorted(m for m in sys.modules if m.split('.')[0] in ('yaml', 'multiprocessing')"
        " or m.startswith('conformance.parallel.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True).stdout
    assert out.splitlines()[-1] == "MODULES:", out
    assert "120 record(s)" in out
