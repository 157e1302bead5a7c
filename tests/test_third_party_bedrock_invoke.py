"""Issue 43's proof: a wire API turnspec does not ship, whose model and stream live in the URL
and whose stream nests (Claude through Bedrock InvokeModel, tests/third_party/
their_bedrock_invoke.py: its own record, schemas and cassettes, written from AWS's docs with
turnspec's public API only), passes `turnspec conform`; its stream's inner events are
decoded by the framing its record names and checked by the inner API's schema; the planted
defects fail (tests/mutants.py), each naming the sentence it breaks.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from mutants import (
    InvokeModelIdCutAtColon,
    InvokeModelIdNotPercentEncoded,
    InvokeModelReaderIgnoresUrl,
    InvokeModelStreamToInvoke,
)

from conformance.adapters import registry as adapter_registry
from conformance.adapters.errors import AuthError, NetworkError
from conformance.adapters.protocol import RequestContext
from conformance.adapters.streams import framed_events
from conformance.cli import main
from conformance.core.findings import Selection
from conformance.suite.cassettes import iter_cassettes
from conformance.suite.checks.streams import wire_values
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import registry, schemas
from conformance.wire.api import ErrorSignals
from conformance.wire.eventstream import EVENT_STREAM
from conformance.wire.framing import Framing, FramingError, ProviderStreamError

ROOT = Path(__file__).resolve().parents[1]
THIRD = ROOT / "tests" / "third_party"
REF = f"{THIRD / 'their_bedrock_invoke.py'}:TheirBedrockInvokeAdapter"
CASSETTES = THIRD / "cassettes" / "their-bedrock-invoke"
ADAPTER = adapter_registry.load(REF)  # registers its record, as `turnspec conform` does
API = registry.get("bedrock-invoke-anthropic")


def _interactions(name: str) -> list[Any]:
    [cassette] = [c for c in iter_cassettes(CASSETTES) if c.label == name]
    return cassette.interactions


def test_the_honest_adapter_passes_conform(capsys: Any) -> None:
    rc = main(["conform", REF, "--cassettes", str(CASSETTES), "--no-samples", "--output", "json"])
    report = json.loads(capsys.readouterr().out)
    failed = {r["rule"]: r["reasons"][:2] for r in report["results"] if r["status"] == "fail"}
    assert rc == 0 and failed == {}, failed
    results = {r["rule"]: r for r in report["results"] if r["adapter"] == "their-bedrock-invoke"}
    # what needs the URL, the nested stream and the record's own errors ran, and passed
    for rule in ("TC109", "TC802", "TC601", "TC606", "TC607", "TC609", "TC610", "TC801", "TC903", "TC904"):
        assert results[rule]["status"] == "pass" and results[rule]["passed"] > 0, (rule, results[rule])


def test_the_record_names_the_framing_its_cassettes_are_decoded_with() -> None:
    """The content type is AWS's event stream, which the built-in framing also claims: the
    record's nested framing decodes the cassette (the record's choice), and the probes read
    the inner Anthropic events."""
    it = _interactions("text.yaml")[1]
    assert (
        it.content_type == "application/vnd.amazon.eventstream"
        and registry.framing_for_content_type(it.content_type) is EVENT_STREAM
    )
    assert it.api == API.name and it.framing is API.framing and it.framing is not EVENT_STREAM
    events = wire_values(it)
    assert events is not None
    assert [e["type"] for e in events][:2] == ["message_start", "content_block_start"] and events[-1][
        "type"
    ] == "message_stop"
    assert API.probes.stream_stop_reason(events) == "end_turn"
    assert API.probes.stream_usage(events) == {"input": 18, "output": 12, "cache_read": 0, "cache_write": 0}
    # each inner event ends where its outer frame does (TC607 cuts there)
    ends = API.framing.frame_ends(it.response_body)
    assert ends == EVENT_STREAM.frame_ends(it.response_body) and ends[-1] == len(it.response_body)


def test_inner_events_are_checked_by_the_inner_apis_schema(tmp_path: Path, capsys: Any) -> None:
    """The record has no stream-event schema of its own: the Anthropic one validates the inner
    events. An inner event missing a required field (`content_block_delta` without `index`)
    is refused by it, which the outer frame alone cannot show."""
    assert schemas.owner(API, "stream-event") is registry.get("anthropic-messages")
    assert schemas.owner(API, "request") is API
    it = _interactions("text.yaml")[1]
    events = wire_values(it)
    assert events is not None and schemas.event_problems(API, events) == []
    broken = [dict(e) for e in events]
    k = next(i for i, e in enumerate(broken) if e["type"] == "content_block_delta")
    del broken[k]["index"]
    [(at, pointer, message)] = schemas.event_problems(API, broken)
    assert (at, pointer) == (k, "/index") and "missing required field `index`" in message
    # the outer frames of the same stream are valid event-stream frames all along: a schema of
    # the outer frame (`{"chunk": {"bytes": ...}}`) cannot see it
    body = b"".join(_chunk(e) for e in broken)
    assert [e.value for e in API.framing.json_events([body])] == broken
    path = tmp_path / "stream.bin"
    path.write_bytes(body)
    assert main(["wire", "parse", "--adapter", REF, str(path)]) == 1
    err = capsys.readouterr().err
    assert f"event {k}" in err and "missing required field `index` (anthropic-messages stream-event schema)" in err


def _frame(payload: bytes) -> bytes:
    """One `chunk` event frame around `payload`, encoded as AWS's "Event stream encoding" says
    (prelude, string headers, payload, two CRC32s), as the cassette writer does."""

    def header(name: str, value: str) -> bytes:
        n, v = name.encode(), value.encode()
        return bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v

    raw = (
        header(":event-type", "chunk") + header(":content-type", "application/json") + header(":message-type", "event")
    )
    prelude = struct.pack(">II", 12 + len(raw) + len(payload) + 4, len(raw))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    msg = prelude + raw + payload
    return msg + struct.pack(">I", zlib.crc32(msg))


def _chunk(event: dict[str, Any]) -> bytes:
    return _frame(json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode())


def test_a_second_framing_for_one_media_type_is_an_error_at_registration() -> None:
    """Registering a framing for the nested form under the event stream's media type would
    make the decoding of every such cassette an accident of registration order: refused."""
    twin = Framing(
        "another-event-stream", EVENT_STREAM.decoder, EVENT_STREAM.to_json, media_types=EVENT_STREAM.media_types
    )
    with pytest.raises(
        ValueError,
        match=re.escape("claims media type 'application/vnd.amazon.eventstream', which framing 'aws-event-stream'"),
    ):
        registry.register_framing(twin)
    assert API.framing not in registry.framings()  # the record holds its own


def test_an_exception_frame_is_classed_by_the_records_own_table() -> None:
    """InvokeModelWithResponseStream's ResponseStream has modelTimeoutException, which
    ConverseStream's has not: the record's table classes it, never Bedrock Converse's."""
    it = _interactions("errors.yaml")[-1]
    with pytest.raises(NetworkError, match="modelTimeoutException"):
        list(framed_events(API.framing, [it.response_body], errors=API.errors))
    own = ErrorSignals(frames={"modelTimeoutException": "auth"})
    with pytest.raises(AuthError):
        list(framed_events(API.framing, [it.response_body], errors=own))
    # events before the frame, in the same chunk, are still given
    got: list[Any] = []
    with pytest.raises(ProviderStreamError):
        for ev in API.framing.json_events([it.response_body]):
            got.append(ev.value["type"])
    assert got[0] == "message_start" and got[-1] == "content_block_stop"
    # the Converse record's table, as earlier releases classed every frame
    converse = registry.get("bedrock-converse").errors
    assert converse.frame_class("throttlingException", "slow down") == "rate_limit"
    assert converse.frame_class("validationException", "Input is too long for requested model.") == "context_overflow"
    assert converse.frame_class("validationException", "bad") == "invalid_request"
    assert converse.frame_class("internalServerException") == "server_error"
    assert converse.frame_class("modelTimeoutException") == "network"
    assert converse.frame_class("fooException") is None


def test_a_broken_chunk_is_a_located_framing_error() -> None:
    """A chunk whose `bytes` is no base64, or base64 of no JSON: a `FramingError` naming the
    event (the frames themselves are sound: their CRCs hold)."""
    ok = _chunk({"type": "ping"})
    for payload, why in (
        (b'{"bytes": "not base64!"}', "/chunk/bytes is not base64"),
        (json.dumps({"bytes": base64.b64encode(b"{nope").decode()}).encode(), "payload is not JSON"),
        (b'{"bytes": 5}', "/chunk/bytes is a int, not a base64 string"),
    ):
        with pytest.raises(FramingError, match=re.escape(why)) as caught:
            list(API.framing.json_events([ok + _frame(payload)]))
        assert caught.value.event == 1


def test_the_stream_is_read_alike_in_any_chunking() -> None:
    it = _interactions("tools.yaml")[1]
    ctx = RequestContext(session_id="s", message_id="01JZC0RE000000000000000001")
    whole = list(ADAPTER.stream_response([it.response_body], ctx))
    body = it.response_body
    bits = list(ADAPTER.stream_response([body[i : i + 5] for i in range(0, len(body), 5)], ctx))
    assert whole == bits and [e["type"] for e in whole].count("tool_use_start") == 2


@pytest.mark.parametrize(
    ("cls", "rule", "says"),
    [
        (InvokeModelIdCutAtColon, "TC109", 'canonical §6.3: "Canonical form: `<provider>:<model_name>`"'),
        (InvokeModelIdNotPercentEncoded, "TC109", "MUST be percent-encoded"),
        (
            InvokeModelStreamToInvoke,
            "TC109",
            "a streaming request sent to the non-streaming endpoint /model/{model}/invoke",
        ),
        (InvokeModelReaderIgnoresUrl, "TC802", "URL path: rendered /model/unknown/invoke"),
    ],
    ids=["cut", "unencoded", "stream-to-invoke", "reader-ignores-url"],
)
def test_each_planted_defect_fails_naming_the_sentence(cls: type, rule: str, says: str) -> None:
    report = run(
        SuiteConfig.for_adapter(cls(), cassette_dirs=[CASSETTES], samples=None, selection=Selection(select=(rule,)))
    )
    result = report.result(rule, "their-bedrock-invoke")
    assert result is not None and result.status == "fail"
    assert any(says in r for r in result.reasons), result.reasons
