"""The vertex-anthropic-messages wire record and schemas, checked against the documentation (scaffolded by
`python -m conformance.dev new-wire-api`: write each test from the docs' examples)."""

from __future__ import annotations

from conformance.wire import schemas
from conformance.wire.vertex_anthropic_messages import VERTEX_ANTHROPIC_MESSAGES


def test_the_request_schema_refuses_a_body_the_docs_refuse() -> None:
    """TODO(vertex-anthropic-messages): a request body the documentation refuses (here: an empty object)."""
    validator = schemas.validator(VERTEX_ANTHROPIC_MESSAGES, "request")
    assert validator is not None
    why = "schemas/wire/vertex-anthropic-messages/request.json accepts an empty body: write it from the docs"
    assert not validator.is_valid({}), why
