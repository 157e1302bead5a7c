"""RFC 6901 reference tokens, declared once (`conformance.core.pointers`) for every locator."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from conformance.core.pointers import pointer, token, unescape


def test_tokens_escape_tilde_before_slash() -> None:
    assert token("a/b~c") == "a~1b~0c"
    assert token("~1") == "~01"  # not "~1": that would decode as "/"
    assert token(3) == "3"
    assert pointer([]) == "" and pointer(["a", 0, "b/c", ""]) == "/a/0/b~1c/"


@given(st.lists(st.text(), max_size=5))
def test_a_pointer_decodes_to_its_path(path: list[str]) -> None:
    """RFC 6901 §4: split on `/`, then `~1` -> `/`, then `~0` -> `~`."""
    p = pointer(path)
    got = [] if p == "" else [t.replace("~1", "/").replace("~0", "~") for t in p[1:].split("/")]
    assert got == path
    assert [unescape(token(t)) for t in path] == path
