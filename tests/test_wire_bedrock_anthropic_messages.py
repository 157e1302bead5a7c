"""The bedrock-anthropic-messages wire record and schemas, checked against the documentation (scaffolded by
`python -m conformance.dev new-wire-api`: write each test from the docs' examples)."""

from __future__ import annotations

from conformance.wire import schemas
from conformance.wire.bedrock_anthropic_messages import BEDROCK_ANTHROPIC_MESSAGES


def test_the_request_schema_refuses_a_body_the_docs_refuse() -> None:
    """TODO(bedrock-anthropic-messages): a request body the documentation refuses (here: an empty object)."""
    validator = schemas.validator(BEDROCK_ANTHROPIC_MESSAGES, "request")
    assert validator is not None
    why = "schemas/wire/bedrock-anthropic-messages/request.json accepts an empty body: write it from the docs"
    assert not validator.is_valid({}), why
