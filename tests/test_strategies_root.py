"""A wrong `root` for the strategies is a one-line error naming what exists (issue 39, item
7), not a bare `KeyError` from inside the compiler."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conformance.core.schemas import schema_set
from conformance.strategies import documents, invalid_documents, sample

CALLS: dict[str, Callable[..., Any]] = {
    "documents": documents,
    "invalid_documents": invalid_documents,
    "sample": lambda root, **kw: next(iter(sample(root, 1, **kw))),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_unknown_root_is_a_one_line_value_error_listing_the_roots(name: str) -> None:
    with pytest.raises(ValueError) as err:
        CALLS[name]("Message")
    text = str(err.value)
    assert "\n" not in text and not isinstance(err.value, KeyError)
    assert text.startswith("root 'Message' is not a schema of canonical v1; did you mean message.json?")
    assert all(n in text for n in schema_set("canonical", "v1").documents)


@pytest.mark.parametrize(("fmt", "version"), [("nope", "v1"), ("canonical", "v9")])
def test_an_unknown_schema_set_is_a_one_line_value_error(fmt: str, version: str) -> None:
    with pytest.raises(ValueError) as err:
        documents("message.json", fmt=fmt, version=version)
    assert str(err.value).startswith(f"no schemas for {fmt} {version} (known: canonical v1/v2")


def test_the_roots_of_the_peer_formats_work() -> None:
    for root, fmt, version in (
        ("turn-frame.json", "gpt2099", "v2"),
        ("entry.json", "chibi", "v1"),
        ("turn.json", "geppetto", "v1"),
    ):
        assert isinstance(next(iter(sample(root, 1, fmt=fmt, version=version))), dict)
