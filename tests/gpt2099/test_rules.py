"""Each GP rule: a fixture that violates it, and a valid neighbour that does not."""

from __future__ import annotations

import pytest

from conformance.formats import catalog, get_format

from .conftest import FIXTURES, findings

# rule -> (violating fixture, pointer of the finding, passing fixture)
CASES = {
    "GP001": ("GP001-syntax.nuon", "", "thread-valid.nuon"),
    "GP002": ("GP002-duration.nuon", "", "thread-valid.nuon"),
    "GP010": ("GP010-foreign.json", "", "window-valid.json"),
    "GP011": ("GP011-options.jsonl", "/meta/options", "thread-valid.jsonl"),
    "GP012": ("GP012-both.jsonl", "/meta", "thread-valid.jsonl"),
    "GP013": ("GP013-unknown-block.jsonl", "/content/0", "thread-valid.jsonl"),
    "GP014": ("GP014-provider-events.jsonl", "", "tools-valid.json"),
    "GP015": ("GP015-streamer-content.jsonl", "/content", "streamer-valid.jsonl"),
    "GP016": ("GP016-streamer-no-block.jsonl", "", "streamer-valid.jsonl"),
    "GP020": ("GP020-schema.jsonl", "/content/0/text", "thread-valid.jsonl"),
    "GP101": ("GP101-bad-id.jsonl", "/id", "thread-valid.jsonl"),
    "GP102": ("GP102-dup-id.jsonl", "/id", "thread-valid.jsonl"),
    "GP103": ("GP103-base64.jsonl", "/content/0/source/data", "thread-valid.jsonl"),
    "GP104": ("GP104-head-id.jsonl", "/meta/head", "thread-valid.jsonl"),
    "GP105": ("GP105-document-turn.jsonl", "/content", "thread-valid.jsonl"),
    "GP106": ("GP106-mime.jsonl", "/content/0/source/media_type", "thread-valid.jsonl"),
    "GP201": ("GP201-unresolved.jsonl", "/meta/continues/1", "thread-valid.jsonl"),
    "GP202": ("GP202-later.jsonl", "/meta/continues/0", "thread-valid.jsonl"),
    "GP203": ("GP203-cycle.jsonl", "/meta/continues", "thread-valid.jsonl"),
    "GP204": ("GP204-bookmark.jsonl", "/meta/head", "thread-valid.jsonl"),
    "GP301": ("GP301-unpaired.jsonl", "/content/0", "thread-valid.jsonl"),
    "GP302": ("GP302-name.jsonl", "/content/0/name", "thread-valid.jsonl"),
    "GP401": ("GP401-no-ptr.jsonl", "", "thread-valid.jsonl"),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires_on_its_fixture(rule: str) -> None:
    bad, pointer, _ = CASES[rule]
    hits = [f for f in findings(FIXTURES / bad) if f.rule == rule]
    assert hits, f"{rule} did not fire on {bad}"
    assert pointer in {f.pointer for f in hits}
    assert all(f.line is not None for f in hits)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_quiet_on_valid_neighbour(rule: str) -> None:
    good = CASES[rule][2]
    assert rule not in {f.rule for f in findings(FIXTURES / good)}


def test_every_gp_rule_has_a_case() -> None:
    gp = {r.id for r in get_format("gpt2099").rules if r.id.startswith("GP")}
    assert gp == set(CASES)


def test_rules_are_listed_with_sections() -> None:
    infos = {r.id: r for r in catalog() if r.id.startswith("GP")}
    assert set(CASES) <= set(infos)
    assert all(r.section for r in infos.values())


def test_valid_fixtures_have_no_errors() -> None:
    for name in (
        "thread-valid.jsonl",
        "thread-valid.nuon",
        "window-valid.json",
        "response-valid.json",
        "tools-valid.json",
        "streamer-valid.jsonl",
    ):
        errors = [f for f in findings(FIXTURES / name) if f.severity == "error"]
        assert errors == [], name


def test_nuon_lines_point_at_rows() -> None:
    (f,) = [f for f in findings(FIXTURES / "thread-valid.nuon") if f.rule == "GP401"]
    assert (f.line, f.pointer) == (6, "/3")  # the fourth row starts on line 6


def test_strict_makes_unknown_blocks_errors() -> None:
    from conformance.api import validate
    from conformance.core.findings import Selection
    from conformance.formats import Options

    report = validate(
        [FIXTURES / "GP013-unknown-block.jsonl"],
        Options(selection=Selection(strict=True)),
        fmt="gpt2099",
    )
    assert [f.severity for f in report.findings if f.rule == "GP013"] == ["error"]


def test_ignore_by_prefix() -> None:
    from conformance.api import validate
    from conformance.core.findings import Selection
    from conformance.formats import Options

    report = validate(
        [FIXTURES / "GP203-cycle.jsonl"],
        Options(selection=Selection(ignore=("GP2",))),
        fmt="gpt2099",
    )
    assert not [f for f in report.findings if f.rule.startswith("GP2")]


def test_bad_input_is_located_never_raised(tmp_path) -> None:
    cases = {
        "trunc.jsonl": b'{"id": "03f0aaaaaaaaaaaaaaaaaaaa1", "meta": {"role": "us',
        "utf8.nuon": b'[[id]; ["\xff"]]',
        "deep.nuon": b"[" * 5000,
        "dup.nuon": b"{a: 1, a: 2}",
        "nan.nuon": b"[NaN]",
        "list.json": b"[1, 2]",
        "empty.json": b"",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        fs = findings(p)
        assert fs, name
        assert all(f.severity in ("error", "warning") and f.line is not None for f in fs), name
