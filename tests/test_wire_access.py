"""An API's endpoint, key and secret headers are declared once, in its record
(`WireApi.access`): `turnspec cassettes lint` and `turnspec wire record` read them there, so
a record registered from outside the package is scrubbed and linted like a built-in one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.adapters.protocol import WireRequest
from conformance.errors import InputError
from conformance.suite import record as recorder
from conformance.wire import registry
from conformance.wire.api import Access, Framing, WireApi
from conformance.wire.cassette_lint import lint

MADE_UP = WireApi(
    name="made-up-chat",
    title="A made-up chat API",
    docs=("https://example.com/docs",),
    request_paths=(re.compile(r"/made-up/chat$"),),
    framing=Framing.NDJSON,
    is_streaming=lambda url, body: False,
    schema_dir="made-up",
    access=Access(
        base_url="https://api.made-up.example",
        key_env="MADE_UP_KEY",
        key_header="x-made-up-key",
        key_prefix="",
        credential_headers=("X-Made-Up-Key",),
        account_headers=("x-made-up-tenant",),
    ),
)

CASSETTE = """interactions:
- request:
    body: '{}'
    headers:
      x-made-up-key:
      - mk_4f9Qz81LpXw2
    method: POST
    uri: https://api.made-up.example/made-up/chat
  response:
    body:
      string: '{}'
    headers:
      x-made-up-tenant:
      - tenant-7731
    status:
      code: 200
      message: OK
version: 1
"""


def test_every_built_in_api_declares_where_it_lives_and_its_credential_header() -> None:
    for api in registry.APIS:
        assert api.access.base_url, api.name
        assert api.access.credential_headers, api.name
        if api.access.key_env:
            assert api.access.key_header in api.access.credential_headers, api.name


def test_lint_reads_a_registered_records_secret_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "made-up.yaml"
    path.write_text(CASSETTE)
    assert [h.finding.rule for h in lint(path)] == []  # unknown headers: not a secret yet
    monkeypatch.setattr(registry, "APIS", (*registry.APIS, MADE_UP))
    found = sorted((h.finding.rule, h.finding.line) for h in lint(path))
    assert found == [("CL001", 6), ("CL004", 14)]  # the lines of the values


def test_record_mode_uses_the_records_endpoint_and_key_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "APIS", (*registry.APIS, MADE_UP))
    assert "x-made-up-key" in recorder.secret_request_headers()
    assert "x-made-up-tenant" in recorder.secret_response_headers()
    monkeypatch.delenv("MADE_UP_KEY", raising=False)
    request = WireRequest("POST", "/made-up/chat", {}, {})
    with pytest.raises(InputError, match=r"\$MADE_UP_KEY"):
        recorder.record(request, "made-up-chat", Path("unused.yaml"))
    assert MADE_UP.access.auth("k") == {"x-made-up-key": "k"}
