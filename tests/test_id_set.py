"""`engine.IdSet`, the run's message ids (TS202), behaves as a set of strings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.formats.canonical.engine import IdSet

_IDS = st.text("0123AZ", min_size=0, max_size=3)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), _IDS),
        st.tuples(st.just("update"), st.lists(_IDS, max_size=6, unique=True)),
        st.tuples(st.just("update-rising"), st.lists(_IDS, max_size=6, unique=True)),
    ),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(ops=_OPS, probes=st.lists(_IDS, max_size=10))
def test_id_set_is_a_set(ops: list[tuple[str, object]], probes: list[str]) -> None:
    """Any sequence of adds and batch updates (ids in order or not, after the last id or
    not) leaves the same members as a set; membership and disjointness answer as a
    set's, for ids in both parts and for none."""
    ids, oracle = IdSet(), set()
    for op, arg in ops:
        if op == "add":
            assert isinstance(arg, str)
            ids.add(arg)
            oracle.add(arg)
            continue
        assert isinstance(arg, list)
        batch = sorted(arg) if op == "update-rising" else arg
        if not batch:
            continue
        assert ids.isdisjoint(batch) == oracle.isdisjoint(batch)
        ids.update(batch)
        oracle.update(batch)
    assert len(ids) == len(oracle)
    assert ids.seq == sorted(set(ids.seq)), "the list stays strictly increasing"
    assert set(ids.seq) | ids.rest == oracle == set(ids)
    again = IdSet()  # the same ids, kept otherwise (all in the list): equal as sets
    if oracle:
        again.update(sorted(oracle, reverse=True))
    assert again == ids
    if oracle:
        again.add(min(oracle) + "~")
        assert again != ids
    for x in [*probes, *oracle]:
        assert (x in ids) == (x in oracle), x
    if probes:
        assert ids.isdisjoint(probes) == oracle.isdisjoint(probes)


def test_ids_in_order_cost_no_hashing() -> None:
    """ULIDs written in order all go to the sorted list, none to the hash set."""
    ids = IdSet()
    ids.update(["01A", "01B"])
    ids.add("01C")
    ids.update(["01E", "01D"])  # a batch after the last id, in any order
    assert ids.seq == ["01A", "01B", "01C", "01D", "01E"] and not ids.rest
    ids.add("01AA")  # out of order: the hash set
    assert ids.rest == {"01AA"} and "01AA" in ids and "01AB" not in ids and 5 not in ids


def test_a_location_that_does_not_fit_keeps_the_id_and_drops_only_the_place() -> None:
    """A SQLite rowid is a "line" and may pass 2**40: the id is still a duplicate when it
    repeats (TS202), it is just not said where it first came from (never another file)."""
    s = IdSet()
    s.add("01AAAAAAAAAAAAAAAAAAAAAAAA", "store.db#messages", 2**41)
    s.add("01AAAAAAAAAAAAAAAAAAAAAAAB", "other.jsonl", 7)
    s.update(["01AAAAAAAAAAAAAAAAAAAAAAAC", "01AAAAAAAAAAAAAAAAAAAAAAAD"], "big.db#messages", 2**40 - 1)
    assert s.where("01AAAAAAAAAAAAAAAAAAAAAAAA") == ("", -1)
    assert s.where("01AAAAAAAAAAAAAAAAAAAAAAAB") == ("other.jsonl", 7)
    assert s.where("01AAAAAAAAAAAAAAAAAAAAAAAD") == ("", -1)
    assert "01AAAAAAAAAAAAAAAAAAAAAAAC" in s and s.where("01AAAAAAAAAAAAAAAAAAAAAAAZ") is None
