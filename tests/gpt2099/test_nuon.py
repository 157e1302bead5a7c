"""The NUON subset reader: what gpt2099's exports use, and located errors for the rest."""

from __future__ import annotations

import pytest

from conformance.formats.gpt2099.nuon import MAX_DEPTH, NuonError, parse


def test_table_becomes_list_of_records() -> None:
    text = '[[id, role]; [a1, user], ["b 2", assistant]]'
    assert parse(text).value == [{"id": "a1", "role": "user"}, {"id": "b 2", "role": "assistant"}]


def test_nested_tables_records_and_lists() -> None:
    text = "{rows: [[type, text]; [text, hi]], xs: [1 2, 3], f: 1.5, e: -2e3, t: true, n: null}"
    assert parse(text).value == {
        "rows": [{"type": "text", "text": "hi"}],
        "xs": [1, 2, 3],
        "f": 1.5,
        "e": -2000.0,
        "t": True,
        "n": None,
    }


def test_strings_all_quote_styles_and_escapes() -> None:
    text = r"""["a\"b\n\u{1F600}\u00e9", 'no \n escape', `tick`, r#'raw ' quote'#, "multi
line"]"""
    assert parse(text).value == ['a"b\n😀é', "no \\n escape", "tick", "raw ' quote", "multi\nline"]


def test_comments_and_quoted_keys() -> None:
    assert parse('# head\n{"a b": 1, # trailing\n c: x}').value == {"a b": 1, "c": "x"}


def test_item_lines_follow_multiline_strings() -> None:
    parsed = parse('[[t]; ["one\ntwo"],\n [x]]\n')
    assert parsed.item_lines == [1, 3]


@pytest.mark.parametrize(
    ("text", "kind", "line", "column"),
    [
        ("{a: 1,\n a: 2}", "duplicate", 2, 2),
        ("[1kb]", "unsupported", 1, 2),
        ("[\n 2024-01-01]", "unsupported", 2, 2),
        ("[1..5]", "unsupported", 1, 2),
        ("[0x[ff]]", "unsupported", 1, 2),
        ("[inf]", "non_finite", 1, 2),
        ("[$env]", "unsupported", 1, 2),
        ('["open', "eof", 1, 2),
        ("{a 1}", "syntax", 1, 4),
        ("[[a, b]; [1]]", "syntax", 1, 10),
        ("[1] 2", "syntax", 1, 5),
        ('"\\q"', "syntax", 1, 2),
    ],
)
def test_errors_are_located(text: str, kind: str, line: int, column: int) -> None:
    with pytest.raises(NuonError) as e:
        parse(text)
    assert (e.value.kind, e.value.line, e.value.column) == (kind, line, column)
    assert f"line {line}, column {column}" in e.value.message


def test_depth_is_bounded_without_recursion_error() -> None:
    with pytest.raises(NuonError) as e:
        parse("[" * (MAX_DEPTH + 5))
    assert e.value.kind == "depth"
    assert parse("[" * 50 + "]" * 50).value is not None
