"""Bad input: every problem is a located finding, reading continues, the input is untouched."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import validate
from conformance.core.findings import Finding
from conformance.core.jsonio import read_json, read_jsonl

GOOD = (Path(__file__).parent / "rules" / "canonical" / "valid.jsonl").read_bytes().splitlines(keepends=True)


def rules_by_line(path: Path) -> list[tuple[int | None, str]]:
    return [(f.line, f.rule) for f in validate([path]).findings]


def write(tmp_path: Path, data: bytes, name: str = "t.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        (b'{"id": "x", "role": }\n', "TS001"),
        (b'{"text": "caf\xe9"}\n', "TS002"),
        (b'{"a": 1, "a": 2}\n', "TS006"),
        (b'{"a": NaN}\n', "TS007"),
        (b'{"a": -Infinity}\n', "TS007"),
        (b'{"a": Infinity}\n', "TS007"),
        (b"[" * 100_000 + b"\n", "TS008"),
        (b"   \n", "TS005"),
        (b"\n", "TS005"),
    ],
)
def test_bad_line_is_located_and_reading_continues(tmp_path: Path, bad: bytes, rule: str) -> None:
    data = GOOD[0] + GOOD[1] + bad + GOOD[2] + GOOD[3] + GOOD[4]
    p = write(tmp_path, data)
    found = rules_by_line(p)
    assert (3, rule) in found, found
    # the lines after the bad one were still read and validated
    assert sum(1 for f in validate([p]).files for _ in [f]) == 1
    assert validate([p]).files[0].records == 5


def test_truncated_last_line(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD[0] + GOOD[1][: len(GOOD[1]) // 2])
    assert rules_by_line(p) == [(2, "TS009")]


def test_bom_and_crlf_are_warnings_and_content_still_validates(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + b"".join(line.rstrip(b"\n") + b"\r\n" for line in GOOD)
    p = write(tmp_path, data)
    report = validate([p])
    assert sorted((f.line, f.rule) for f in report.findings) == [(1, "TS003"), (1, "TS004")]
    assert report.exit_code == 0 and report.files[0].records == 5


def test_ten_megabyte_string_is_fine(tmp_path: Path) -> None:
    msg = json.loads(GOOD[1])
    msg["content"][0]["text"] = "x" * 10_000_000
    p = write(tmp_path, GOOD[0] + json.dumps(msg).encode() + b"\n")
    report = validate([p])
    assert report.findings == [] and report.files[0].records == 2


def test_line_longer_than_limit_is_skipped_without_holding_it(tmp_path: Path) -> None:
    p = write(tmp_path, b'{"x": "' + b"y" * 5000 + b'"}\n' + GOOD[0])
    items = list(read_jsonl(p, max_line_bytes=1000))
    assert [getattr(i, "rule", "record") for i in items] == ["TS008", "record"]


def test_deep_nesting_in_json_file(tmp_path: Path) -> None:
    p = write(tmp_path, b"[" * 100_000 + b"]" * 100_000, "deep.json")
    found = [getattr(i, "rule", None) for i in read_json(p)]
    assert found == ["TS008"]


def test_invalid_utf8_position(tmp_path: Path) -> None:
    p = write(tmp_path, b'{"a": "ok"}\n{"b": "\xff"}\n')
    (finding,) = [f for f in validate([p]).findings if f.rule == "TS002"]
    assert finding.line == 2 and "column 8" in finding.message


def test_wrong_types_everywhere_never_crash(tmp_path: Path) -> None:
    lines = [
        b"5",
        b'"s"',
        b"null",
        b"[]",
        b"true",
        b'{"content": 5}',
        b'{"metadata": []}',
        b'{"role": 1, "content": [1, null, "x"]}',
    ]
    p = write(tmp_path, b"\n".join(lines) + b"\n")
    report = validate([p])
    assert {f.line for f in report.findings} == set(range(1, len(lines) + 1))
    assert {f.rule for f in report.findings} == {"TS020"}


def test_input_is_never_modified(tmp_path: Path) -> None:
    p = write(tmp_path, b'{"a": NaN}\n' + GOOD[1] + b"\xff\n")
    before = hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns
    validate([p])
    assert (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t.jsonl"]


def test_json_list_reports_element_lines(tmp_path: Path) -> None:
    msgs = [json.loads(x) for x in GOOD]
    msgs[3]["content"][0]["bogus"] = 1
    p = write(tmp_path, json.dumps(msgs, indent=2).encode(), "list.json")
    # an unknown field in a known block is a TS010 warning since issue 16 (was TS020)
    (f,) = [x for x in validate([p]).findings if x.rule == "TS010"]
    text = p.read_text().splitlines()
    assert f.pointer == "/3/content/0/bogus"
    assert text[f.line - 1].strip() == "{" and f'"id": "{msgs[3]["id"]}"' in text[f.line]


def test_cli_never_prints_a_traceback(tmp_path: Path) -> None:
    p = write(tmp_path, b"\xff\xfe\x00garbage\n" + b"[" * 50_000 + b"\n")
    r = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "validate", str(p)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 1
    assert "Traceback" not in r.stdout + r.stderr
    assert "TS002" in r.stdout and "TS008" in r.stdout


# -- the fast parser is as strict as jiter: property tests ---------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conformance.core.jsonio import parse  # noqa: E402

_keys = st.text(alphabet=st.sampled_from(list('ab:"\\ \u00e9\u2028')), min_size=0, max_size=4)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(alphabet=st.sampled_from(list('x:"\\{}[],\n\u00e9')), max_size=6)
)
_json = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4), max_leaves=20
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_json, indent=st.sampled_from([None, 1]), ascii_=st.booleans())
def test_parse_equals_stdlib_without_duplicates(doc: object, indent: int | None, ascii_: bool) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_).encode()
    assert parse(text) == doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(_keys, _json, min_size=1, max_size=4), data=st.data(), ascii_=st.booleans())
def test_parse_rejects_every_duplicate_key(doc: dict[str, object], data: st.DataObject, ascii_: bool) -> None:
    key = data.draw(st.sampled_from(sorted(doc)))
    body = json.dumps(doc, ensure_ascii=ascii_)
    dup = json.dumps({key: data.draw(_json)}, ensure_ascii=ascii_)[1:-1]
    text = (body[:-1] + ", " + dup + "}").encode()
    with pytest.raises(ValueError, match="duplicate key"):
        parse(text)


# -- only regular files are read, every read bounded (issue 9) --------------------------


def test_fifo_device_and_loop_are_refused_without_blocking(tmp_path: Path) -> None:
    from conformance.core.errors import InputError
    from conformance.core.jsonio import check_input, read_input

    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)  # no writer: opening it for reading would block forever
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    for name, kind in (("p.jsonl", "FIFO"), ("zero.jsonl", "character device"), ("loop.jsonl", "cannot read")):
        with pytest.raises(InputError, match=kind) as exc:
            list(read_jsonl(tmp_path / name))
        assert str(exc.value).startswith(str(tmp_path / name))
        with pytest.raises(InputError, match=kind):
            list(read_json(tmp_path / name))
    with pytest.raises(InputError, match="folder"):
        check_input(tmp_path)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2000)
    with pytest.raises(InputError, match="larger than 1000 bytes"):
        read_input(big, limit=1000)


def test_nesting_past_orjson_writer_limit_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    for depth in (300, 1000):
        p = tmp_path / f"d{depth}.jsonl"
        p.write_bytes(b'{"a":' * depth + b"1" + b"}" * depth + b"\n")
        (item,) = list(read_jsonl(p))
        assert isinstance(item, Finding) and item.rule == "TS008"


def test_dumps_writes_big_integers_like_the_stdlib() -> None:
    from conformance.core.jsonio import dumps

    assert dumps({"n": 10**400, "s": "é"}) == ('{"n":' + str(10**400) + ',"s":"é"}').encode()
    assert dumps([1, {"a": 2}]) == b'[1,{"a":2}]'
    assert dumps({"a": [1, 2**70]}, indent=True) == json.dumps({"a": [1, 2**70]}, indent=2).encode()


def test_a_fence_answers_as_resolving_every_path_does(tmp_path: Path) -> None:
    """`jsonio.Fence` (the unit's folders resolved once, a path's last part looked at with
    one lstat) gives the answer of resolving each path whole, for every kind of path a
    unit holds: files, links in and out, dangling and looping links, linked folders."""
    from conformance.core.jsonio import Fence

    root = tmp_path / "unit"
    (root / "d" / "e").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f").write_text("x")
    (root / "file").write_text("x")
    (root / "d" / "e" / "file").write_text("x")
    (root / "in").symlink_to(root / "file")
    (root / "out").symlink_to(tmp_path / "outside" / "f")
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "dangling-out").symlink_to(tmp_path / "nowhere")
    (root / "loop").symlink_to(root / "loop")
    (root / "linked").symlink_to(tmp_path / "outside")
    (root / "d" / "up").symlink_to("..")
    paths = [
        root / "file", root / "d" / "e" / "file", root / "in", root / "out", root / "dangling",
        root / "dangling-out", root / "loop", root / "linked", root / "linked" / "f", root / "d" / "up",
        root / "d" / "up" / "file", root / "missing", root / "d" / "missing", root / "d" / "..", root,
        root / "linked" / "missing",
    ]  # fmt: skip

    def reference(p: Path) -> bool:
        try:
            return not p.resolve().is_relative_to(root.resolve())
        except (OSError, RuntimeError):
            return True

    fence = Fence(root)
    got = {str(p.relative_to(tmp_path)): fence.leaves(p) for p in paths}
    assert got == {str(p.relative_to(tmp_path)): reference(p) for p in paths}
    assert got["unit/out"] and got["unit/linked/f"] and got["unit/loop"] and not got["unit/in"]
