"""docs/traceability.md's openai-messages table stays true: its rule ids exist, its tests exist and
test those rules, every OM rule enforces a row, and the counts are the rows' (`peer_table`).

tests/test_traceability_peers.py checks the three seed formats' tables (its assertions name exactly those); this table uses refs and rule ids of its own (`OAM-nn`, `OMnnn`), which that test does not read, so it gets the same checks here.
"""

from __future__ import annotations

import re

import pytest
from peer_table import PeerTable

TABLE = PeerTable("openai-messages", re.compile(r"\bOM\d{3}\b"), re.compile(r"OAM-\d{2}"), min_rows=13)


def test_rows_are_unique_and_classed() -> None:
    TABLE.check_rows()


@pytest.mark.parametrize("ref", TABLE.refs_with_tests())
def test_every_test_named_exists_and_names_its_rules(ref: str) -> None:
    TABLE.check_test(ref)


def test_every_rule_named_exists_and_every_rule_enforces_a_row() -> None:
    TABLE.check_rules()


def test_counts_match_the_rows() -> None:
    TABLE.check_counts()
