"""docs/traceability.md's ai-sdk table stays true: its rule ids exist, its tests exist and
test those rules, every AS rule enforces a row, and the counts are the rows' (`peer_table`).

The same checks as openai-messages' table, over this table's refs and rule ids (`ASK-nn`, `ASnnn`).
"""

from __future__ import annotations

import re

import pytest
from peer_table import PeerTable

TABLE = PeerTable("ai-sdk", re.compile(r"\bAS\d{3}\b"), re.compile(r"ASK-\d{2}"), min_rows=12)


def test_rows_are_unique_and_classed() -> None:
    TABLE.check_rows()


@pytest.mark.parametrize("ref", TABLE.refs_with_tests())
def test_every_test_named_exists_and_names_its_rules(ref: str) -> None:
    TABLE.check_test(ref)


def test_every_rule_named_exists_and_every_rule_enforces_a_row() -> None:
    TABLE.check_rules()


def test_counts_match_the_rows() -> None:
    TABLE.check_counts()
