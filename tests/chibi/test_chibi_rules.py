"""Each chibi rule: the clean fixtures pass it, and one broken variant per rule fails it.

The broken variants are made from a copy of a fixture context (tests/chibi/fixtures,
described in its README) by the mutation named after the rule. Each case lists the
exact set of rules the mutation must trigger, so a rule that fires too widely fails too.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chibi_helpers import FIXTURES, check, edit_entry, edit_json, read_lines, rules_of, write_lines

from conformance.formats import catalog, detect_format
from conformance.formats.chibi import CATALOG
from conformance.formats.chibi.checker import bytes_per_token_range, token_estimate

PART = "partitions/1767225600-1767225666.jsonl"
BLOOM = "partitions/1767225600-1767225666.bloom"


def manifest(fn: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        edit_json(d / "transcript" / "manifest.json", fn)

    return mutate


def entry(rel: str, index: int, fn: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        edit_entry(d, rel, index, fn)

    return mutate


def lines(rel: str, fn: Callable[[list[dict[str, Any]]], None], context_too: bool = True) -> Callable[[Path], None]:
    """Edit the list of entries of a file (and context.jsonl the same way for legacy09)."""

    def mutate(d: Path) -> None:
        for path in [d / rel, *([d / "context.jsonl"] if context_too else [])]:
            values = read_lines(path)
            fn(values)
            write_lines(path, values)

    return mutate


def set_(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(e: dict[str, Any]) -> None:
        e[key] = value

    return fn


def _dup_result(v: list[dict[str, Any]]) -> None:
    v.insert(6, {**v[5], "id": "0b8f3f7e-8a49-4d0c-9d1e-3b6c1f2a9e10"})


def _dup_call(v: list[dict[str, Any]]) -> None:
    v.insert(5, {**v[4], "id": "0b8f3f7e-8a49-4d0c-9d1e-3b6c1f2a9e11"})


def _raw(rel: str, text: str) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        (d / rel).write_text(text, encoding="utf-8")

    return mutate


def _orphan(d: Path) -> None:
    shutil.copy(d / "transcript" / PART, d / "transcript" / "partitions" / "1767300000-1767300001.jsonl")


def _rename_bloom(d: Path) -> None:
    (d / "transcript" / BLOOM).rename(d / "transcript" / "partitions" / "filter.bloom")
    edit_json(
        d / "transcript" / "manifest.json",
        lambda m: m["partitions"][0].update(bloom_file="partitions/filter.bloom"),
    )


def _pre_partition(d: Path) -> None:
    """chibi before 0.5.1: the transcript is one transcript.jsonl beside context.jsonl."""
    (d / "transcript" / "active.jsonl").rename(d / "transcript.jsonl")
    (d / "transcript").rmdir()


def _wordless_partition_with_bits(d: Path) -> None:
    """An earlier partition whose entries hold no word chibi indexes ("?" and "!"), with a
    bloom file that has bits set: chibi would have built an all-zero filter for it."""
    t = d / "transcript"
    entries = [
        {"id": "6f1c2d3e-4f50-4617-8293-a4b5c6d7e801", "timestamp": 1767225500, "from": "alice", "to": "default",
         "content": "?", "entry_type": "message", "role": "user"},
        {"id": "6f1c2d3e-4f50-4617-8293-a4b5c6d7e802", "timestamp": 1767225501, "from": "default", "to": "alice",
         "content": "!", "entry_type": "message", "role": "agent"},
    ]  # fmt: skip
    write_lines(t / "partitions" / "1767225500-1767225501.jsonl", entries)
    shutil.copy(t / BLOOM, t / "partitions" / "1767225500-1767225501.bloom")

    def add(m: dict[str, Any]) -> None:
        m["partitions"].insert(
            0,
            {**m["partitions"][0], "file": "partitions/1767225500-1767225501.jsonl",
             "bloom_file": "partitions/1767225500-1767225501.bloom", "start_ts": 1767225500,
             "end_ts": 1767225501, "entry_count": 2, "token_count": 2},
        )  # fmt: skip

    edit_json(t / "manifest.json", add)


def _zero_bloom(d: Path) -> None:
    edit_json(d / "transcript" / BLOOM, lambda b: b.update(bits={"bits": [0] * 8}))


def _context_lines(fn: Callable[[list[dict[str, Any]]], None]) -> Callable[[Path], None]:
    return lines("context.jsonl", fn, context_too=False)


def _spc_in_context(v: list[dict[str, Any]]) -> None:
    v.append(
        {
            "id": "7a1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
            "timestamp": 1767229400,
            "from": "system",
            "to": "default",
            "content": "You are chibi.",
            "entry_type": "system_prompt_changed",
        }
    )


# rule -> (fixture, mutation, the exact rules the mutation triggers)
CASES: dict[str, tuple[str, Callable[[Path], None], set[str]]] = {
    "CB020": ("default", entry("active.jsonl", 3, set_("content", 5)), {"CB020"}),
    "CB021": ("default", manifest(lambda m: m.pop("rotation_policy")), {"CB021"}),
    "CB022": (
        "default",
        lines("inbox.jsonl", lambda v: v[0].update(priority="high"), context_too=False),
        {"CB022"},
    ),
    "CB023": ("default", _raw("context_meta.json", '{"last_combined_prompt": 5}'), {"CB023"}),
    "CB024": (
        "default",
        lines("requests.jsonl", lambda v: v[0].update(request="POST /chat"), context_too=False),
        {"CB024"},
    ),
    "CB025": ("default", _raw(f"transcript/{BLOOM}", '{"bits": "AAEC", "hasher": {}}'), {"CB025"}),
    "CB030": ("legacy09", entry("active.jsonl", 1, set_("role", "user")), {"CB030"}),
    "CB101": ("default", entry("active.jsonl", 1, set_("id", "msg-0001")), {"CB101"}),
    "CB102": (
        "legacy09",
        lines("transcript/active.jsonl", lambda v: v[3].update(id=v[2]["id"])),
        {"CB102"},
    ),
    "CB103": ("default", entry("active.jsonl", 3, set_("timestamp", 1767229305.0)), {"CB103"}),
    "CB104": ("default", entry("active.jsonl", 0, set_("content", "Compacted")), {"CB104"}),
    "CB105": ("default", entry("active.jsonl", 0, set_("metadata", {})), {"CB105"}),
    "CB106": ("default", entry("active.jsonl", 2, set_("content", "over to you")), {"CB106"}),
    "CB201": ("legacy09", lines("transcript/active.jsonl", lambda v: v.pop(5)), {"CB201"}),
    "CB202": (
        "legacy09",
        entry("active.jsonl", 5, set_("tool_call_id", "call_other")),
        {"CB201", "CB202"},
    ),
    "CB203": ("legacy09", lines("transcript/active.jsonl", _dup_result), {"CB203"}),
    "CB204": ("legacy09", lines("transcript/active.jsonl", _dup_call), {"CB204"}),
    "CB205": ("legacy09", entry("active.jsonl", 7, set_("entry_type", "tool_result")), {"CB205"}),
    "CB206": ("legacy09", entry("active.jsonl", 5, set_("from", "shell")), {"CB206"}),
    "CB210": ("default", _context_lines(_spc_in_context), {"CB210", "CB212"}),
    "CB211": ("default", _context_lines(lambda v: v.pop(0)), {"CB211", "CB212"}),
    "CB212": (
        "default",
        _context_lines(lambda v: v[3].update(content="edited by hand")),
        {"CB212"},
    ),
    "CB301": ("default", lambda d: (d / "transcript" / PART).unlink(), {"CB301"}),
    "CB302": ("default", manifest(lambda m: m["partitions"][0].update(entry_count=9)), {"CB302"}),
    "CB303": (
        "default",
        manifest(lambda m: m["partitions"][0].update(end_ts=1767225700)),
        {"CB303", "CB312"},
    ),
    "CB304": ("default", entry("active.jsonl", 0, set_("timestamp", 1767225610)), {"CB304"}),
    "CB305": (
        "default",
        lambda d: (d / "transcript" / "active.jsonl").unlink(),
        {"CB305", "CB212"},
    ),
    "CB306": ("default", manifest(lambda m: m.update(active_partition=PART)), {"CB306", "CB212"}),
    "CB307": ("default", manifest(lambda m: m["partitions"][0].update(token_count=5)), {"CB307"}),
    "CB308": ("default", _orphan, {"CB308"}),
    "CB309": ("default", lambda d: (d / "transcript" / BLOOM).unlink(), {"CB309"}),
    "CB310": (
        "default",
        manifest(lambda m: m["partitions"][0].update(bloom_file="../../../etc/passwd")),
        {"CB310", "CB312"},
    ),
    "CB311": ("default", manifest(lambda m: m.update(version=2)), {"CB311"}),
    "CB312": ("default", _rename_bloom, {"CB312"}),
    "CB320": ("default", manifest(lambda m: m["rotation_policy"].update(max_entries=7)), {"CB320"}),
    "CB330": ("default", _zero_bloom, {"CB330"}),
    # issue 17: bloom content beyond shape (a filter with bits for a partition without words)
    "CB331": ("default", _wordless_partition_with_bits, {"CB331"}),
    # issue 17: tolerated with a warning (an unknown type is skipped, as chibi skips it)
    "CB026": ("default", entry("active.jsonl", 3, set_("entry_type", "handoff_v2")), {"CB026"}),
    "CB027": ("default", entry("active.jsonl", 3, set_("written_by", "chibi 0.6")), {"CB027"}),
    "CB213": ("default", _raw(".dirty", ""), {"CB213"}),
    # issue 17: CHB-27 (a written false reads the same) and CHB-40 (system_prompt.md is read)
    "CB028": ("default", entry("active.jsonl", 3, set_("flow_control", False)), {"CB028"}),
    "CB215": ("default", _raw("system_prompt.md", "You are chibi. Be terse.\n"), {"CB215"}),
    # issue 17: the pre-partition layout is read (the transcript is no longer ignored)
    "CB313": ("legacy09", _pre_partition, {"CB313"}),
    # issue 17: documented rules checked
    "CB107": ("legacy09", entry("active.jsonl", 4, set_("content", "path=Cargo.toml")), {"CB107"}),
    "CB108": ("legacy09", entry("active.jsonl", 5, set_("to", "elsewhere")), {"CB108"}),
    "CB109": ("default", entry("active.jsonl", 2, set_("to", "bob")), {"CB109"}),
    "CB110": ("default", entry("active.jsonl", 3, set_("metadata", {"transcript_anchor_id": "x"})), {"CB110"}),
    "CB214": (
        "default",
        _context_lines(lambda v: v.append({**v[0], "id": "3f1c2d3e-4f50-4617-8293-a4b5c6d7e8f0"})),
        {"CB214", "CB212"},
    ),
}


def test_every_rule_has_a_case() -> None:
    own = {r.id for r in CATALOG if r.id.startswith("CB")}
    assert own == set(CASES) | {"CB031"}  # CB031 is the pinned-format test below


@pytest.mark.parametrize("name", ["default", "legacy09"])
def test_fixtures_are_clean(name: str) -> None:
    report = check(FIXTURES / name)
    assert report.findings == []
    assert report.files[0].format == "chibi"


def test_vocabulary_is_reported() -> None:
    report = check(FIXTURES)
    vocab = {Path(f.path).name: f.extra["vocabulary"] for f in report.files}
    assert vocab == {"default": "v0.10", "legacy09": "v0.9"}
    d = report.as_dict()["files"]
    assert {f["path"].rsplit("/", 1)[-1]: f["transcript_entries"] for f in d} == {
        "default": 13,
        "legacy09": 8,
    }


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires(rule: str, ctx_copy: Callable[[str], Path]) -> None:
    fixture, mutate, expected = CASES[rule]
    d = ctx_copy(fixture)
    mutate(d)
    report = check(d)
    assert rules_of(report) == expected, [f.format() for f in report.findings]
    hit = [f for f in report.findings if f.rule == rule]
    assert hit and all(f.path and f.message for f in hit)
    assert all(f.severity == catalog()[rule].severity for f in hit)


def test_located_findings(ctx_copy: Callable[[str], Path]) -> None:
    d = ctx_copy("default")
    edit_entry(d, "active.jsonl", 3, set_("content", 5))
    edit_entry(d, "active.jsonl", 1, set_("id", "msg-0001"))
    found = {(f.rule, f.path.split("default/")[1], f.line, f.pointer) for f in check(d).findings}
    # context.jsonl holds a copy of the entry: chibi reads it too, so it is reported there
    assert found == {
        ("CB020", "transcript/active.jsonl", 4, "/content"),
        ("CB020", "context.jsonl", 4, "/content"),
        ("CB101", "transcript/active.jsonl", 2, "/id"),
    }


def test_timestamp_in_milliseconds(ctx_copy: Callable[[str], Path]) -> None:
    d = ctx_copy("default")
    edit_entry(d, "active.jsonl", 1, set_("timestamp", 1767229300000))
    report = check(d)
    assert rules_of(report) == {"CB103"}
    assert "milliseconds" in report.findings[0].message


def test_pinned_vocabulary(ctx_copy: Callable[[str], Path]) -> None:
    report = check(FIXTURES / "default", fmt="chibi-v0.9")
    assert rules_of(report) == {"CB031"}
    assert len(report.findings) == 7  # 3 control_transfer entries + 4 messages with `role`
    assert check(FIXTURES / "default", fmt="chibi-v0.10").findings == []
    assert rules_of(check(FIXTURES / "legacy09", fmt="chibi-v0.10")) == {"CB031"}
    # unpinned, a transcript holds one vocabulary: a v0.10 `role` among v0.9 entries is CB030
    mixed = ctx_copy("legacy09")
    edit_entry(mixed, "active.jsonl", 1, set_("role", "user"))
    assert rules_of(check(mixed)) == {"CB030"}


def test_mixed_vocabulary_reported_once(ctx_copy: Callable[[str], Path]) -> None:
    d = ctx_copy("legacy09")
    for i in (1, 2, 3):
        edit_entry(d, "active.jsonl", i, set_("role", "user"))
    report = check(d)
    assert [f.rule for f in report.findings] == ["CB030"]
    assert report.files[0].extra["vocabulary"] == "mixed"
    assert check(d).exit_code == 0  # a warning
    from conformance.api import validate
    from conformance.core.findings import Selection
    from conformance.formats import Options

    assert validate([d], Options(selection=Selection(strict=True))).exit_code == 1


def test_no_manifest_makes_partitions_orphans(ctx_copy: Callable[[str], Path]) -> None:
    d = ctx_copy("default")
    (d / "transcript" / "manifest.json").unlink()
    report = check(d)
    orphan = [f for f in report.findings if f.rule == "CB308"]
    assert len(orphan) == 1 and "no manifest.json" in orphan[0].message
    # without the manifest, chibi reads only active.jsonl: the derivation still holds
    assert rules_of(report) == {"CB308"}


def test_transcript_directory_alone() -> None:
    report = check(FIXTURES / "default" / "transcript")
    assert report.findings == []
    assert report.files[0].extra["transcript_entries"] == 13


# -- bad input: located findings, never a traceback ------------------------------------------


def test_truncated_partition(ctx_copy: Callable[[str], Path]) -> None:
    d = ctx_copy("default")
    p = d / "transcript" / "active.jsonl"
    p.write_bytes(p.read_bytes()[:-40])
    report = check(d)
    trunc = [f for f in report.findings if f.rule == "TS009"]
    assert len(trunc) == 1 and trunc[0].line == 5 and trunc[0].path.endswith("active.jsonl")
    # the derivation is undefined once the transcript cannot be read: not reported
    assert "CB212" not in rules_of(report)


def test_invalid_utf8_and_garbage(ctx_copy: Callable[[str], Path]) -> None:
    d = ctx_copy("default")
    p = d / "transcript" / "active.jsonl"
    data = p.read_bytes().split(b"\n")
    data[1] = data[1].replace(b"Thanks", b"Th\xffnks")
    p.write_bytes(b"\n".join(data))
    (d / "transcript" / "manifest.json").write_text("{not json", encoding="utf-8")
    (d / "inbox.jsonl").write_text('{"id": 1}\n\n[' + "[" * 5000 + "\n", encoding="utf-8")
    report = check(d)
    got = {(f.rule, Path(f.path).name, f.line) for f in report.findings}
    assert ("TS001", "manifest.json", 1) in got
    assert ("TS002", "active.jsonl", 2) in got
    assert ("CB022", "inbox.jsonl", 1) in got
    assert ("TS005", "inbox.jsonl", 2) in got
    assert {r for r, n, _ in got if n == "inbox.jsonl"} >= {"CB022", "TS005"}
    assert any(r in ("TS008", "TS009", "TS001") and n == "inbox.jsonl" and ln == 3 for r, n, ln in got)
    # chibi cannot load a context whose manifest does not parse: no partition is judged
    assert not {"CB308", "CB212", "CB301"} & {r for r, _, _ in got}


def test_manifest_paths_are_not_followed(ctx_copy: Callable[[str], Path], tmp_path: Path) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"not": "chibi"}\n', encoding="utf-8")
    d = ctx_copy("default")
    edit_json(d / "transcript" / "manifest.json", lambda m: m["partitions"][0].update(file=str(secret)))
    report = check(d)
    assert "CB310" in rules_of(report)
    assert not any(f.path == str(secret) for f in report.findings)


# -- single files -----------------------------------------------------------------------------


@pytest.mark.samples
def test_doc_examples(samples: Path) -> None:
    report = check(samples / "chibi")
    by_file: dict[str, list[tuple[str, int | None]]] = {}
    for f in report.findings:
        by_file.setdefault(Path(f.path).name, []).append((f.rule, f.line))
    # the v0.10 doc elides four ids as "..."; both docs list an inbox entry among the entries
    assert sorted(by_file["doc-examples.v0.10.jsonl"]) == sorted(
        [
            ("CB101", 5),
            ("CB101", 6),
            ("CB101", 7),
            ("CB101", 8),
            ("CB102", 6),
            ("CB102", 7),
            ("CB102", 8),
            ("CB020", 12),
        ]
    )
    assert by_file["doc-examples.v0.9.jsonl"] == [("CB020", 10)]
    assert "manifest.constructed-from-unit-test.json" not in by_file
    assert "manifest.default-fresh.constructed.json" not in by_file
    vocab = {Path(f.path).name: f.extra.get("vocabulary") for f in report.files}
    assert vocab["doc-examples.v0.9.jsonl"] == "v0.9" and vocab["doc-examples.v0.10.jsonl"] == "v0.10"
    assert {f.format for f in report.files} == {"chibi"}


def test_context_file_alone(tmp_path: Path) -> None:
    values = read_lines(FIXTURES / "default" / "context.jsonl")
    p = tmp_path / "context.jsonl"
    write_lines(p, values[1:])
    assert rules_of(check(p)) == {"CB211"}
    write_lines(p, values)
    assert check(p).findings == []


def test_partition_alone_skips_pairing(tmp_path: Path) -> None:
    values = read_lines(FIXTURES / "legacy09" / "transcript" / "active.jsonl")
    part = tmp_path / "partitions"
    part.mkdir()
    write_lines(part / "1-2.jsonl", values[5:])  # results whose calls are in a neighbour
    assert check(part / "1-2.jsonl").findings == []
    write_lines(tmp_path / "loose.jsonl", values[5:])
    assert rules_of(check(tmp_path / "loose.jsonl")) == {"CB202"}


def test_manifest_alone(tmp_path: Path) -> None:
    m = json.loads((FIXTURES / "default" / "transcript" / "manifest.json").read_text())
    p = tmp_path / "manifest.json"
    p.write_text(json.dumps(m))
    assert check(p).findings == []  # the partition files are not looked for
    m["partitions"].append({**m["partitions"][0]})
    p.write_text(json.dumps(m))
    assert rules_of(check(p)) == {"CB304"}


# -- detection ------------------------------------------------------------------------------


def test_detection_does_not_steal_canonical(tmp_path: Path) -> None:
    canon = Path(__file__).parents[2] / "conformance" / "data" / "examples" / "session.jsonl"
    assert detect_format(canon).name == "canonical"  # type: ignore[union-attr]
    tricky = tmp_path / "tricky.jsonl"
    msg = json.loads(canon.read_text().splitlines()[0])
    msg["content"] = [{"type": "text", "text": '{"id":"x","timestamp":1,"from":"a","entry_type":"message"}'}]
    tricky.write_text(json.dumps(msg) + "\n")
    assert detect_format(tricky).name == "canonical"  # type: ignore[union-attr]


def test_detection_of_chibi_files(tmp_path: Path) -> None:
    d = FIXTURES / "default"
    for p in (
        d,
        d / "transcript",
        d / "context.jsonl",
        d / "inbox.jsonl",
        d / "requests.jsonl",
        d / "context_meta.json",
        d / "transcript" / "manifest.json",
    ):
        assert detect_format(p).name == "chibi", p  # type: ignore[union-attr]
    # a first line longer than the peek is recognised by serde's field order
    long = tmp_path / "long.jsonl"
    e = read_lines(d / "context.jsonl")[1]
    e["content"] = "x" * 200_000
    write_lines(long, [e])
    assert detect_format(long).name == "chibi"  # type: ignore[union-attr]
    assert check(long).findings == []
    assert detect_format(tmp_path) is None  # an empty directory is nobody's


# -- the token estimate ------------------------------------------------------------------------


def test_bytes_per_token_range() -> None:
    lengths = [10, 0, 7, 1]
    assert token_estimate(lengths, 3) == 4 + 0 + 3 + 1
    assert bytes_per_token_range(lengths, 8) == (3, 3)
    assert bytes_per_token_range(lengths, 18) == (1, 1)
    assert bytes_per_token_range(lengths, 3) == (10, 11)  # any b >= 10 gives one token per entry
    assert bytes_per_token_range(lengths, 2) is None
    assert bytes_per_token_range(lengths, 19) is None
    assert bytes_per_token_range([], 0) == (1, 1)


def test_a_pre_partition_transcript_is_read_as_the_only_partition(ctx_copy: Callable[[str], Path]) -> None:
    d = ctx_copy("legacy09")
    _pre_partition(d)
    report = check(d)
    assert rules_of(report) == {"CB313"}
    assert report.as_dict()["files"][0]["transcript_entries"] == 8  # read, not skipped
    # and its entries are checked: a repeated id in it is found
    values = read_lines(d / "transcript.jsonl")
    values[2]["id"] = values[1]["id"]
    write_lines(d / "transcript.jsonl", values)
    assert "CB102" in rules_of(check(d))


@pytest.mark.parametrize(("content", "fires"), [("?", True), ("é", False), ("ab", False), ("a b", True)])
def test_a_bloom_is_foreign_only_when_its_partition_surely_has_no_word(
    ctx_copy: Callable[[str], Path], content: str, fires: bool
) -> None:
    # chibi's tokenizer keeps alphanumeric runs of 2+ bytes; a non-ASCII character may be
    # one alone (Rust and Python classify some differently), so it never counts as wordless
    d = ctx_copy("default")
    _wordless_partition_with_bits(d)
    part = d / "transcript" / "partitions" / "1767225500-1767225501.jsonl"
    values = read_lines(part)
    values[0]["content"] = content
    write_lines(part, values)
    fired = [f for f in check(d).findings if f.rule == "CB331"]
    assert bool(fired) is fires
