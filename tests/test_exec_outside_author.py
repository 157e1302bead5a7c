"""Adapters an outside author wrote from docs/exec-protocol.md and schemas/exec/v1/ only (never
the host's code): a Node adapter of the Anthropic Messages API (tests/data/exec/node_child.mjs,
plain .mjs, no npm dependency), a Node adapter of Bedrock's Converse API that decodes AWS's
binary event stream itself (tests/data/exec/bedrock_child.mjs, written from AWS's docs as well),
a Go adapter of Gemini's generateContent (tests/data/exec/go_child/, the standard library only)
and a Go adapter of Ollama's /api/chat (tests/data/exec/go_ollama_child/, the standard library
only: NDJSON streams, tool calls with no ids that it mints from the reply). Each passes
`turnspec conform exec` (every message validated) and `turnspec exec smoke` as written; a defect planted in a copy
fails the check that exists for it. What the author met that the docs did not say (the
`<provider>:` model prefix, the parse and read_request result fields, the options'
`extra`/`provider_raw`/`critical_key`, when a stream is over for a cancel) is now on the page.

Each toolchain test skips with the reason when `node` or `go` is missing (.ci/run installs
golang-go; node comes with the machine).

A fifth outsider, an OpenAI Responses adapter (tests/data/exec/responses_child.py), is a
standalone Python 3 script on the standard library alone, written from the same pages plus
`turnspec wire show openai-responses` and OpenAI's Responses documentation: it runs with `-I -S`
(no site-packages, so no turnspec to import even by accident). A sixth, a Gemini generateContent
adapter (tests/data/exec/gemini_child.py), is one too, written from the same pages plus `turnspec
wire show gemini-generate-content` and Google's Gemini API documentation: SSE and JSON-array
streams, thoughtSignatures as signature-only thinking blocks, ids minted for id-less calls.

A seventh, an OpenAI Chat Completions adapter (tests/data/exec/chat_child.mjs), is plain Node 20
again, written from the same pages plus `turnspec wire show openai-chat-completions` and
OpenAI's Chat Completions documentation: SSE `data:` chunks ending in `[DONE]`, tool calls
streamed as argument fragments keyed by `tool_calls[].index`, usage in the last chunk when
`stream_options.include_usage` is asked, custom tool calls and the deprecated `function_call`.

An eighth, an OpenRouter Chat Completions adapter (tests/data/exec/go_openrouter_child/, Go, the
standard library only), was written from the same pages plus `turnspec wire show
openrouter-chat-completions` and OpenRouter's reasoning-tokens, streaming and errors pages:
reasoning_details as thinking and redacted_thinking blocks sent back with their signatures,
streamed details read once (not again from `delta.reasoning`), mid-stream `error` events."""

from __future__ import annotations

import ast
import base64
import json
import re
import shlex
import shutil
import subprocess
import sys
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import gemini as gemini_adapter
from conformance.cli import main
from conformance.wire import registry

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "exec"
NODE_CHILD = DATA / "node_child.mjs"
BEDROCK_CHILD = DATA / "bedrock_child.mjs"
GO_CHILD = DATA / "go_child"
GO_OLLAMA_CHILD = DATA / "go_ollama_child"
GO_OPENROUTER_CHILD = DATA / "go_openrouter_child"
RESPONSES_CHILD = DATA / "responses_child.py"
CHAT_CHILD = DATA / "chat_child.mjs"
NODE = shutil.which("node")
GO = shutil.which("go")
BUILD_TIMEOUT_S = 300

needs_node = pytest.mark.skipif(NODE is None, reason="the Node child runs with node (none on PATH)")
needs_go = pytest.mark.skipif(GO is None, reason="the Go child is built with go (.ci/run installs golang-go)")

# checks whose cases drive each operation and each sentence the author had to get right
NODE_EXERCISED = (
    "TC101",  # the parse result's fields (routing, usage, model, status)
    "TC102",  # read_request's messages (model, parent_tool_use_id)
    "TC109",  # the model without its `anthropic:` prefix
    "TC201",  # drop records
    "TC203",  # critical_key: a typed critical_block error
    "TC405",  # signatures kept by the parse and sent back
    "TC601",
    "TC607",
    "TC611",  # cancel: over only after stream_close
    "TC801",
    "TC802",  # read_request round trip through options.provider_raw
    "TC903",
)
BEDROCK_EXERCISED = (
    "TC101",
    "TC102",
    "TC109",  # the model id percent-encoded in the path (`v1%3A0`)
    "TC201",
    "TC203",
    "TC405",  # reasoningText's signature kept by the parse and sent back
    "TC601",
    "TC606",  # the stream's usage arrives after messageStop (the metadata event)
    "TC607",  # event-stream messages cut into chunks anywhere, prelude included
    "TC611",  # cancel after redacted reasoning, which no canonical event carries
    "TC801",  # x-amzn-ErrorType and `exception` messages
    "TC802",  # toolResult status, inferenceConfig.topP, cachePoint blocks read back
    "TC902",
    "TC903",
    "TC904",  # cacheReadInputTokens / cacheWriteInputTokens
)
RESPONSES_EXERCISED = (
    "TC101",  # parse: routing, disjoint usage, the served model, status from `status`
    "TC102",  # read_request: instructions, developer messages, reasoning, function calls
    "TC105",  # stop sequences: no field on the wire, one option_dropped WARN line
    "TC109",  # POST /v1/responses, the model without its `openai:` prefix, `stream: true`
    "TC201",  # drop records
    "TC203",  # critical_key: a typed critical_block error
    "TC405",  # reasoning items go back with their id and encrypted_content
    "TC601",
    "TC605",  # summary parts joined as the parse joins them
    "TC606",
    "TC607",
    "TC609",
    "TC610",  # encrypted_content on the reasoning block's final thinking_delta only
    "TC611",
    "TC801",  # retry-after-ms; response.failed and `error` events raise after message_complete
    "TC802",  # round trip through provider_raw (item ids, refusal parts, tool `strict`)
    "TC901",
    "TC902",  # is_error in band: the output's `Error: ` prefix
    "TC903",  # incomplete -> max_tokens, refusal parts as text
    "TC904",
    "TC907",
)
CHAT_EXERCISED = (
    "TC101",  # parse: routing, disjoint usage, the served model, refusal as the reply's text
    "TC102",  # read_request: developer messages, tool messages linked by tool_call_id
    "TC105",  # max_completion_tokens, stop, temperature
    "TC109",  # POST /v1/chat/completions, the model without its `openai:` prefix, `stream: true`
    "TC201",  # drop records
    "TC203",  # critical_key: a typed critical_block error
    "TC301",
    "TC302",
    "TC303",
    "TC305",
    "TC501",  # output_schema as response_format json_schema
    "TC601",
    "TC602",  # a parallel call's index opens only once the one before it has ended
    "TC605",
    "TC606",
    "TC607",  # SSE `data:` lines cut across chunks
    "TC609",  # function.arguments fragments kept literal, keyed by tool_calls[].index
    "TC611",
    "TC701",  # tool definitions counted as OpenAI's cookbook counts them
    "TC801",  # error.code before error.type before the HTTP status; retry-after-ms; mid-stream error bodies
    "TC802",  # round trip: custom tool calls, the deprecated function_call / function messages
    "TC901",  # images as data: URLs and by URL
    "TC902",  # no error flag: the error in band, `Error: `
    "TC903",
    "TC904",  # prompt_tokens less prompt_tokens_details.cached_tokens
    "TC905",  # stream_options.include_usage on every streaming request
    "TC907",
)
GO_EXERCISED = ("TC101", "TC102", "TC109", "TC201", "TC203", "TC405", "TC601", "TC607", "TC611", "TC802", "TC903")
OLLAMA_EXERCISED = (
    "TC101",
    "TC102",
    "TC105",  # num_predict, temperature and stop in `options`
    "TC109",  # the model in the body without its `ollama:` prefix, `stream` always said
    "TC201",
    "TC203",
    "TC301",  # ids the API issued (issued_ids.yaml) and ids minted from the reply
    "TC303",  # a later reply repeating a call gets a new id
    "TC305",  # id-less results paired by tool_name, oldest call first
    "TC501",  # images in `images`, output_schema in `format`
    "TC601",
    "TC606",
    "TC607",  # NDJSON lines cut across chunks
    "TC611",
    "TC801",  # {"error": ...} with its status, and the mid-stream error line
    "TC802",  # absent `stream` read as true, id-less calls rendered back without ids
    "TC901",  # the media type the wire does not carry, sniffed from the bytes
    "TC902",  # no error flag: the error in the content, read back
    "TC903",
    "TC904",
    "TC907",
)
OPENROUTER_EXERCISED = (
    "TC101",  # parse: reasoning_details as thinking / redacted_thinking blocks before the reply
    "TC102",  # read_request: reasoning_details read back, tool messages linked by tool_call_id
    "TC105",  # max_tokens, temperature and stop where OpenRouter's request keeps them
    "TC109",  # POST /api/v1/chat/completions, the model without its `openrouter:` prefix
    "TC201",
    "TC203",
    "TC301",
    "TC302",
    "TC305",
    "TC404",  # another provider's thinking dropped with its WARN line
    "TC405",  # reasoning_details sent back with their signatures, to OpenRouter only
    "TC501",  # thinking, images, output_schema reach the wire
    "TC601",
    "TC602",
    "TC603",
    "TC604",
    "TC605",  # delta.reasoning_details read, delta.reasoning (the same text) not read twice
    "TC606",
    "TC607",  # SSE `data:` lines cut across chunks
    "TC609",  # streamed tool_calls[].function.arguments fragments, literal
    "TC610",  # a detail's signature on its block's last thinking_delta only
    "TC611",  # cancel after a reasoning.encrypted block too, which no canonical event carries
    "TC801",  # 401/402/403/408/429/502/503 by error.code, Retry-After, the unified mid-stream error chunk
    "TC802",  # round trip: reasoning_details' format/id/index, the `reasoning` request object in extra
    "TC901",
    "TC902",
    "TC903",
    "TC904",  # prompt_tokens less prompt_tokens_details.cached_tokens
    "TC907",  # the reply's (and every chunk's) `model`, not the one asked for
)


def _conform(capsys: pytest.CaptureFixture[str], command: str, *extra: str) -> tuple[int, dict[str, Any]]:
    rc = main(["conform", f"exec:{command}", "--no-samples", "--validate-protocol", "-o", "json", *extra])
    return rc, json.loads(capsys.readouterr().out)


def _results(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["rule"]: r for r in report["results"] if r["adapter"] != "(cassettes)"}


def _passes(capsys: pytest.CaptureFixture[str], command: str, exercised: tuple[str, ...]) -> None:
    assert main(["exec", "smoke", command]) == 0, capsys.readouterr().out
    smoke = capsys.readouterr().out
    assert "FAIL" not in smoke and "skip" not in smoke, smoke  # every operation offered and answered
    rc, report = _conform(capsys, command)
    results = _results(report)
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    for rule in exercised:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    assert report["summary"]["unexercised_capabilities"] == []


def _planted(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert text.count(old) == 1, old  # the plant names one place of the child
    out = tmp_path / source.name
    out.write_text(text.replace(old, new))
    return out


def _failing(capsys: pytest.CaptureFixture[str], command: str, rule: str) -> list[str]:
    rc, report = _conform(capsys, command, "--select", rule)
    result = _results(report)[rule]
    assert rc == 1 and result["status"] == "fail", result
    return list(result["reasons"])


# -- the Node child (Anthropic Messages) -----------------------------------------------------


@needs_node
def test_the_node_child_passes_smoke_and_conform(capsys: pytest.CaptureFixture[str]) -> None:
    _passes(capsys, f"node {shlex.quote(str(NODE_CHILD))}", NODE_EXERCISED)


@needs_node
@pytest.mark.parametrize(
    ("old", "new", "rule", "words"),
    [
        # the parse keeps the thinking block but not its signature: it can never go back
        (
            'case "thinking": return { type: "thinking", text: block.thinking, signature: block.signature ?? null };\n'
            '    case "redacted_thinking": return { type: "redacted_thinking", data: block.data };\n'
            '    case "tool_use":\n      return',
            'case "thinking": return { type: "thinking", text: block.thinking, signature: null };\n'
            '    case "redacted_thinking": return { type: "redacted_thinking", data: block.data };\n'
            '    case "tool_use":\n      return',
            "TC405",
            "not in the parsed message",
        ),
        # an image of a media type the child never declared goes to the wire anyway
        (
            "if (!CAPABILITIES.accepted_image_media_types.includes(String(block.media_type).toLowerCase())) {",
            "if (false) {",
            "TC201",
            "not in the declared accepted_image_media_types",
        ),
        # the canonical id sent whole: `anthropic:conformance-model` is no Anthropic model
        ("model: wireModel(options.model),", "model: options.model,", "TC109", "/model is 'anthropic:"),
        # a block marked critical dropped like any other: the reason says what was marked
        ("  if (critical === true) {", "  if (false) {", "TC203", "marked critical (message metadata.critical = ["),
    ],
    ids=["signature-lost-on-parse", "undeclared-media-type", "model-prefix-kept", "critical-dropped"],
)
def test_a_defect_planted_in_the_node_child_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, rule: str, words: str
) -> None:
    child = _planted(tmp_path, NODE_CHILD, old, new)
    reasons = _failing(capsys, f"node {shlex.quote(str(child))}", rule)
    assert any(words in why for why in reasons), reasons


@needs_node
def test_the_equivalences_a_tc802_failure_compared_up_to_are_printed_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A system prompt of blocks read back as one string fails TC802 on each cache.yaml case;
    the text report names the record's equivalences once after them, not on every case."""
    child = _planted(tmp_path, NODE_CHILD, "ownRaw.system_as_blocks ? system", "false ? system")
    rc = main(["conform", f"exec:node {shlex.quote(str(child))}", "--no-samples", "--select", "TC802"])
    lines = capsys.readouterr().out.splitlines()
    cases = [x for x in lines if x.startswith("      - ")]
    assert rc == 1 and len(cases) >= 2 and all("/system" in x for x in cases), lines
    assert not any("declared equivalences" in x for x in cases), cases
    shared = [x for x in lines if "declared equivalences" in x]
    assert len(shared) == 1 and shared[0].startswith("      each of these compared up to anthropic-messages"), lines


@needs_node
def test_a_crash_in_the_node_child_names_its_type_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The child answers `crash` with JavaScript's `String(error)` as the message ("TypeError:
    ..."): the case reads `crashed: TypeError: ...`, the type once."""
    child = _planted(
        tmp_path, NODE_CHILD, "function render({ messages, tools, options }) {\n", "function render() {\n  null.boom;\n"
    )
    reasons = _failing(capsys, f"node {shlex.quote(str(child))}", "TC109")
    assert any("crashed: TypeError: Cannot read properties of null" in why for why in reasons), reasons
    assert not any("TypeError: TypeError" in why for why in reasons), reasons
    # TC104 alone has no request to judge: each case says why, never "no case applies"
    rc, report = _conform(capsys, f"node {shlex.quote(str(child))}", "--select", "TC104")
    shape = _results(report)["TC104"]
    assert rc == 0 and shape["status"] == "skip" and shape["skipped"] > 0, shape
    assert all(
        why.endswith(
            "no rendered request to judge (TC802 fails it): crashed: TypeError: Cannot read "
            "properties of null (reading 'boom')"
        )
        for why in shape["skip_reasons"]
    ), shape


@needs_node
def test_a_stray_print_in_the_node_child_is_quoted_with_its_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `console.log` left in the child: the case quotes the line it printed on standard
    output and the end of what it wrote to standard error, and the run goes on."""
    child = _planted(
        tmp_path,
        NODE_CHILD,
        "function render({ messages, tools, options }) {\n",
        "function render({ messages, tools, options }) {\n"
        '  process.stderr.write("render: tracing on\\n");\n  process.stdout.write("debug: rendering\\n");\n',
    )
    reasons = _failing(capsys, f"node {shlex.quote(str(child))}", "TC109")
    assert any("not JSON" in why and "'debug: rendering'" in why for why in reasons), reasons
    assert any("stderr: render: tracing on" in why for why in reasons), reasons


# -- the Node child (Bedrock Converse) ----------------------------------------------------------


@needs_node
def test_the_bedrock_child_passes_smoke_and_conform(capsys: pytest.CaptureFixture[str]) -> None:
    _passes(capsys, f"node {shlex.quote(str(BEDROCK_CHILD))}", BEDROCK_EXERCISED)


@needs_node
@pytest.mark.parametrize(
    ("old", "new", "rule", "words"),
    [
        # cacheWriteInputTokens left out of the parsed usage
        (
            "    cache_creation_input_tokens: usage.cacheWriteInputTokens ?? 0,\n    cost_usd",
            "    cache_creation_input_tokens: 0,\n    cost_usd",
            "TC904",
            "cache_creation_input_tokens: parsed 0, recorded 421",
        ),
        # stopReason tool_use read as a natural end
        ('tool_use: "tool_use", max_tokens', 'tool_use: "end_turn", max_tokens', "TC903", "recorded 'tool_use'"),
        # the model id put in the path as it is: `v1:0`, where AWS's SDKs send `v1%3A0`
        (
            "const model = encodeSegment(wireModel(options.model));",
            "const model = wireModel(options.model);",
            "TC109",
            "not percent-encoded as 'anthropic.claude-3-7-sonnet-20250219-v1%3A0'",
        ),
        # a tool result's is_error never reaches toolResult.status
        (
            'if (block.is_error) out.status = "error";',
            'if (false) out.status = "error";',
            "TC902",
            "want [True, False]",
        ),
        # every `exception` message of a stream taken for a server error (throttlingException too)
        (
            "const errorClass = errorClassFor(STREAM_EXCEPTION_STATUS[name] ?? null, name, said);",
            'const errorClass = "server_error";',
            "TC801",
            "error_class 'server_error', want 'rate_limit'",
        ),
        # a cancel forgets the redacted reasoning before the text: no canonical event carried it
        (
            "    for (const { index, at, block } of stream.silent) if (at < delivered) replay.blocks[index] = block;\n",
            "",
            "TC611",
            "thinking.yaml#3: final_content[1] type, text differ from what was streamed before the cancel",
        ),
    ],
    ids=[
        "cache-write-dropped",
        "tool-use-as-end-turn",
        "model-not-percent-encoded",
        "tool-error-lost",
        "throttle-as-server",
        "cancel-forgets-silent-blocks",
    ],
)
def test_a_defect_planted_in_the_bedrock_child_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, rule: str, words: str
) -> None:
    child = _planted(tmp_path, BEDROCK_CHILD, old, new)
    reasons = _failing(capsys, f"node {shlex.quote(str(child))}", rule)
    assert any(words in why for why in reasons), reasons


@needs_node
def test_the_bedrock_child_passes_conform_on_real_recordings(samples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pydantic-ai's recorded Converse traffic (Claude, Nova, Llama, Mistral, gpt-oss...): server
    tool calls and results in a reply, `type: "tool_use"` on a toolUse, empty `system` and
    `inferenceConfig`, tools with no description all pass. TC701's offline heuristic misses two
    counts no template rule explains (DeepSeek-R1 counting 33 input tokens for a history that
    holds a long reply, Moonshot's tool-result turn); nothing else fails."""
    command = f"exec:node {shlex.quote(str(BEDROCK_CHILD))}"
    main(["conform", command, "--samples", str(samples / "wire"), "--validate-protocol", "-o", "json"])
    results = _results(json.loads(capsys.readouterr().out))
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail" and k != "TC701"}
    assert not failed, failed
    assert all(re.search(r"deepseek|moonshotai", why) for why in results["TC701"]["reasons"]), results["TC701"]
    assert results["TC701"]["cases_run"] > 60, results["TC701"]
    for rule in ("TC104", "TC606", "TC609", "TC802"):
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    assert results["TC802"]["cases_run"] > 100, results["TC802"]


def _event_message(event_type: str, payload: bytes) -> bytes:
    """One event-stream message as AWS's event stream encoding documents it (string headers)."""
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07" + len(value).to_bytes(2, "big") + value.encode()
    total = 12 + len(headers) + len(payload) + 4
    prelude = total.to_bytes(4, "big") + len(headers).to_bytes(4, "big")
    head = prelude + zlib.crc32(prelude).to_bytes(4, "big") + headers + payload
    return head + zlib.crc32(head).to_bytes(4, "big")


@needs_node
def test_the_bedrock_child_checks_both_crcs_itself() -> None:
    """The host never sees a corrupted frame from a cassette, so the child's own CRC32 is driven
    over the protocol directly: a good message decodes, a flipped payload byte fails its
    message CRC, a flipped length its prelude CRC, each a located wire_format error."""
    good = _event_message("messageStart", b'{"role":"assistant"}')
    bad_payload = bytearray(good)
    bad_payload[-6] ^= 0x01
    bad_prelude = bytearray(good)
    bad_prelude[3] ^= 0x01
    requests = [{"id": 0, "op": "hello", "params": {"protocol_versions": [1], "turnspec": "test"}}]
    context = {"session_id": "s", "message_id": "m", "request_id": None, "model": "bedrock:x"}
    for n, frame in enumerate((good, bytes(bad_payload), bytes(bad_prelude)), start=1):
        requests.append({"id": 10 * n, "op": "stream_open", "params": {"stream_id": f"s{n}", "context": context}})
        data = base64.b64encode(frame[:5]).decode(), base64.b64encode(frame[5:]).decode()
        for k, chunk in enumerate(data, start=1):
            requests.append({"id": 10 * n + k, "op": "stream_feed", "params": {"stream_id": f"s{n}", "data": chunk}})
    requests.append({"id": 99, "op": "shutdown", "params": {}})
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(BEDROCK_CHILD)],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0 and answers[99]["ok"], done.stderr
    assert answers[11]["ok"] and answers[11]["result"]["events"] == []  # 5 bytes: no prelude yet
    assert [e["type"] for e in answers[12]["result"]["events"]] == ["message_start"]
    assert answers[21]["ok"]  # the prelude is intact: the message is awaited whole
    payload_error = answers[22]["error"]
    assert payload_error["kind"] == "wire_format" and "message CRC does not match" in payload_error["message"]
    assert [e["type"] for e in payload_error["events"]] == ["message_complete"]
    prelude_error = answers[32]["error"]
    assert prelude_error["kind"] == "wire_format" and "prelude CRC does not match" in prelude_error["message"]


# -- the Go child (Gemini generateContent) -------------------------------------------------------


@pytest.fixture(scope="module")
def go_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert GO is not None
    return _go_build(GO_CHILD, tmp_path_factory.mktemp("go-child"))


def _go_build(source: Path, out_dir: Path, name: str = "gemini-child") -> Path:
    binary = out_dir / name
    done = subprocess.run(
        [str(GO), "build", "-o", str(binary), "."],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"go build: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return binary


@needs_go
def test_the_go_child_passes_smoke_and_conform(go_binary: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _passes(capsys, shlex.quote(str(go_binary)), GO_EXERCISED)


@needs_go
def test_a_defect_planted_in_the_go_child_fails_its_check(
    go_binary: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A content filter's finish reason read as a natural end with an empty reply is still
    honest (the record's end_turn); one read as `max_tokens` is not: TC903."""
    source = tmp_path / "src"
    shutil.copytree(GO_CHILD, source)
    main_go = source / "main.go"
    text, n = re.subn(r'"SAFETY":(\s+)"error",', r'"SAFETY":\1"max_tokens",', main_go.read_text())
    assert n == 1  # the plant names one place of the child
    main_go.write_text(text)
    child = _go_build(source, tmp_path)
    reasons = _failing(capsys, shlex.quote(str(child)), "TC903")
    assert any("'SAFETY'" in why for why in reasons), reasons


# -- the Go child of Ollama's /api/chat (tool calls with no ids: the child mints them) ----------


@pytest.fixture(scope="module")
def go_ollama_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert GO is not None
    return _go_build(GO_OLLAMA_CHILD, tmp_path_factory.mktemp("go-ollama-child"), "ollama-child")


@needs_go
def test_the_go_ollama_child_passes_smoke_and_conform(
    go_ollama_binary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Smoke answers ok on every operation, and conform passes with every message validated.
    (Smoke once streamed the first 2xx stream of the API's cassettes, errors.yaml#3 for
    ollama-chat, whose documented error line ({"error": ...}, docs.ollama.com/api/errors) must
    raise: every honest child, the reference adapter served too, FAILed that line. Smoke now
    takes a stream that reports no error.)"""
    command = shlex.quote(str(go_ollama_binary))
    rc = main(["exec", "smoke", command])
    lines = capsys.readouterr().out.splitlines()
    ops = {x.split()[1]: x for x in lines if x.split()}
    assert set(ops) >= {"hello", "render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"}
    assert "outside-ollama (ollama, ollama-chat)" in ops["hello"], lines
    assert rc == 0 and all(x.startswith("ok") for x in lines), lines
    rc, report = _conform(capsys, command)
    results = _results(report)
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    for rule in OLLAMA_EXERCISED:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    assert report["summary"]["unexercised_capabilities"] == []
    # declared false, so their checks say why they skip rather than pass
    assert results["TC609"]["status"] == "skip", results["TC609"]


def _planted_go(tmp_path: Path, old: str, new: str, child: Path = GO_OLLAMA_CHILD, name: str = "ollama-child") -> Path:
    source = tmp_path / "src"
    shutil.copytree(child, source, ignore=shutil.ignore_patterns("bin"))
    hits = [f for f in source.glob("*.go") if old in f.read_text()]
    assert len(hits) == 1 and hits[0].read_text().count(old) == 1, old  # the plant names one place
    hits[0].write_text(hits[0].read_text().replace(old, new))
    return _go_build(source, tmp_path, name)


@needs_go
@pytest.mark.parametrize(
    ("old", "new", "rule", "words"),
    [
        # done_reason `length` (num_predict reached) read as a natural end
        (
            'case "length":\n\t\treturn "max_tokens"',
            'case "length":\n\t\treturn "end_turn"',
            "TC903",
            "recorded 'length' = 'max_tokens'",
        ),
        # prompt_eval_count (the prompt) and eval_count (the reply) swapped
        (
            "usageOf(r.PromptEvalCount, r.EvalCount)",
            "usageOf(r.EvalCount, r.PromptEvalCount)",
            "TC904",
            "; output_tokens: parsed ",
        ),
        # minted ids keyed by the call's position and content only, not by the reply it is in
        (
            "mintedID(r.Model, r.CreatedAt, position,",
            'mintedID("", "", position,',
            "TC303",
            "a repeated call of a later reply is a new call",
        ),
        # each chunk split on newlines on its own: a line cut across two chunks is lost
        (
            "\t\tif i < 0 {\n\t\t\tbreak",
            "\t\tif i < 0 {\n\t\t\ts.pending = nil\n\t\t\tbreak",
            "TC607",
            "7-byte chunks gave different events than one chunk",
        ),
    ],
    ids=["length-as-end-turn", "counts-swapped", "ids-ignore-the-reply", "chunk-boundary-blind"],
)
def test_a_defect_planted_in_the_go_ollama_child_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, rule: str, words: str
) -> None:
    child = _planted_go(tmp_path, old, new)
    reasons = _failing(capsys, shlex.quote(str(child)), rule)
    assert any(words in why for why in reasons), reasons


# -- the Go child of OpenRouter's Chat Completions (reasoning and reasoning_details) -----------


@pytest.fixture(scope="module")
def go_openrouter_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert GO is not None
    return _go_build(GO_OPENROUTER_CHILD, tmp_path_factory.mktemp("go-openrouter-child"), "openrouter-child")


@needs_go
def test_the_go_openrouter_child_passes_smoke_and_conform(
    go_openrouter_binary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Smoke answers ok on every operation and conform passes with every message validated.
    The check openrouter-chat-completions' record gives nothing to read skips, not passes: no
    field asks for usage (TC905; OpenRouter reports it on every stream). TC105, TC609 and
    TC907 once skipped too, the record locating no option fields, no tool-input fragments
    and no served model: they run now (OPENROUTER_EXERCISED)."""
    _passes(capsys, shlex.quote(str(go_openrouter_binary)), OPENROUTER_EXERCISED)
    _, report = _conform(capsys, shlex.quote(str(go_openrouter_binary)))
    results = _results(report)
    assert results["TC905"]["status"] == "skip", results["TC905"]


@needs_go
def test_the_go_openrouter_child_passes_smoke_from_its_manifest(
    go_openrouter_binary: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """turnspec-exec.toml starts bin/openrouter-child from the manifest's folder. Smoke's
    tool_id_map step asks a fresh session, as the page says: the call the stream bound
    (reasoning.yaml#1 streams one) is in the session the other steps used, not in that one
    (smoke once asked the shared session and said "a fresh session's map holds 1 pairs")."""
    folder = tmp_path / "child"
    (folder / "bin").mkdir(parents=True)
    shutil.copy(GO_OPENROUTER_CHILD / "turnspec-exec.toml", folder)
    shutil.copy(go_openrouter_binary, folder / "bin" / "openrouter-child")
    rc = main(["exec", "smoke", str(folder / "turnspec-exec.toml")])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 0 and all(x.startswith("ok") for x in lines), lines
    assert "outside-openrouter (openrouter, openrouter-chat-completions)" in lines[0], lines
    ops = {x.split()[1]: x for x in lines}
    assert "a fresh session's map holds 0 pair(s)" in ops["tool_id_map"], lines


@needs_go
@pytest.mark.parametrize(
    ("old", "new", "rule", "words"),
    [
        # the assistant turn's reasoning_details not sent back: OpenRouter's "Preserving reasoning blocks"
        (
            'out["reasoning_details"] = details',
            "_ = details",
            "TC405",
            "thinking signature issued by openrouter not in the field",
        ),
        # a reasoning.text detail sent back without its signature
        (
            'd["signature"] = sig',
            "_ = sig",
            "TC802",
            "/messages/1/reasoning_details/0/signature: missing from rendered",
        ),
        # the request's `reasoning` object (extra) not sent: reasoning is never asked for
        (
            '\tfor k, v := range asObj(opts["extra"]) {\n\t\tbody[k] = v',
            '\tfor k, v := range asObj(opts["extra"]) {\n\t\tif k == "reasoning" {\n\t\t\tcontinue\n\t\t}\n\t\tbody[k] = v',
            "TC802",
            '/reasoning: missing from rendered (recorded {"max_tokens": 2000})',
        ),
        # `length` read as a natural end: a truncated reply looks finished
        (
            '"length":         "max_tokens",',
            '"length":         "end_turn",',
            "TC903",
            "streamed stop_reason 'end_turn', recorded 'length' = 'max_tokens'",
        ),
        # prompt_tokens already holds the cached ones: adding them counts them twice
        (
            "input := prompt - cached",
            "input := prompt + cached",
            "TC904",
            "input_tokens: parsed 2560, recorded 512",
        ),
        # delta.reasoning read beside delta.reasoning_details: the same text twice
        (
            'if r := str(delta["reasoning"]); r != "" && len(details) == 0 {',
            'if r := str(delta["reasoning"]); r != "" {',
            "TC606",
            "stream content differs from the parse",
        ),
        # temperature never sent (the record locates OpenRouter's option fields)
        (
            'body["temperature"] = v',
            "_ = v",
            "TC105",
            "wire /temperature carries None",
        ),
        # each streamed arguments fragment trimmed: `partial_json` is the literal fragment
        (
            'if a := str(fn["arguments"]); a != "" {',
            'if a := strings.TrimSpace(str(fn["arguments"])); a != "" {',
            "TC609",
            "partial_json fragments, provider sent",
        ),
        # the requested model reported as the one that served the reply
        (
            'if m := str(body["model"]); m != "" {',
            'if m := str(body["model"]); m == "-" {',
            "TC907",
            "as the model that served the call",
        ),
        # the unified mid-stream error chunk classified as a bad request (its error.code says server_error)
        (
            "return s.fail(out, errorOf(0, nil, chunk, nilIfEmpty(s.requestID)))",
            "return s.fail(out, errorOf(400, nil, chunk, nilIfEmpty(s.requestID)))",
            "TC801",
            "mid-stream error: error_class 'invalid_request', want 'server_error'",
        ),
        # a 429's Retry-After header not read
        (
            'headerValue(headers, "retry-after"), 64)',
            'headerValue(headers, "x-retry-after"), 64)',
            "TC801",
            "recorded hint 60",
        ),
        # the rest of a line cut across two chunks thrown away
        (
            "\t\t\tif !final || len(s.pending) == 0 {\n\t\t\t\treturn nil",
            "\t\t\tif !final || len(s.pending) == 0 {\n\t\t\t\ts.pending = nil\n\t\t\t\treturn nil",
            "TC607",
            "7-byte chunks gave different events than one chunk",
        ),
    ],
    ids=[
        "reasoning-details-dropped",
        "signature-dropped",
        "reasoning-not-requested",
        "length-as-end-turn",
        "cached-counted-twice",
        "reasoning-read-twice",
        "temperature-dropped",
        "fragments-trimmed",
        "requested-model-as-served",
        "mid-stream-error-as-bad-request",
        "retry-after-ignored",
        "chunk-boundary-blind",
    ],
)
def test_a_defect_planted_in_the_go_openrouter_child_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, rule: str, words: str
) -> None:
    child = _planted_go(tmp_path, old, new, GO_OPENROUTER_CHILD, "openrouter-child")
    reasons = _failing(capsys, shlex.quote(str(child)), rule)
    assert any(words in why for why in reasons), reasons


def _or_chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
    """One `data:` line of an OpenRouter chat.completion.chunk (openrouter.ai/docs/api-reference/streaming,
    .../guides/best-practices/reasoning-tokens: `delta.reasoning` and `delta.reasoning_details`)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    chunk = {"id": "gen-1", "object": "chat.completion.chunk", "created": 1761052928, "provider": "Anthropic"}
    return (
        b"data: "
        + json.dumps({**chunk, "model": "anthropic/claude-sonnet-4", "choices": choices, **extra}).encode()
        + b"\n\n"
    )


def _thought(text: str, **fields: Any) -> dict[str, Any]:
    detail = {"type": "reasoning.text", "text": text, "format": "anthropic-claude-v1", "index": 0, **fields}
    return {"role": "assistant", "content": "", "reasoning": text, "reasoning_details": [detail]}


def _feed(child: _Child, stream_id: str, body: bytes, size: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for at in range(0, len(body), size):
        chunk = base64.b64encode(body[at : at + size]).decode()
        events += child.call("stream_feed", {"stream_id": stream_id, "data": chunk})["events"]
    return events + child.call("stream_close", {"stream_id": stream_id})["events"]


@needs_go
def test_the_go_openrouter_child_reads_streamed_reasoning_details_once_and_signs_the_last_delta(
    go_openrouter_binary: Path,
) -> None:
    """Each chunk carries the reasoning twice, as `reasoning` and as a reasoning_details
    fragment: the child reads the details only. The signature comes in a fragment of its own
    after the text: it rides on the block's last thinking_delta (streaming §5.3), and the
    aggregate sends it back in reasoning_details with the detail's format and index."""
    body = b"".join(
        [
            b": OPENROUTER PROCESSING\n\n",
            _or_chunk(_thought("The user wants")),
            _or_chunk(_thought(" the weather.")),
            _or_chunk(_thought("", signature="EqQBsig==")),
            _or_chunk({"content": "Sunny."}),
            _or_chunk({"content": ""}, "stop"),
            _or_chunk(
                None,
                usage={"prompt_tokens": 40, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 30}},
            ),
            b"data: [DONE]\n\n",
        ]
    )
    child = _Child(go_openrouter_binary)
    context = {"session_id": "S1", "message_id": "01KR3QB2D20000000000000001", "request_id": "r1", "model": None}
    runs = []
    for n, size in enumerate((len(body), 5)):
        child.call("stream_open", {"stream_id": f"s{n}", "context": context})
        runs.append(_feed(child, f"s{n}", body, size))
    assert runs[0] == runs[1]  # cut anywhere, the same events
    events = runs[0]
    thinking = [e for e in events if e["type"] == "thinking_delta"]
    assert "".join(e["text"] for e in thinking) == "The user wants the weather."
    assert [e.get("signature") for e in thinking] == [None, None, "EqQBsig=="]
    done = events[-1]
    assert done["type"] == "message_complete" and done["stop_reason"] == "end_turn", done
    assert done["final_content"] == [
        {"type": "thinking", "text": "The user wants the weather.", "signature": "EqQBsig=="},
        {"type": "text", "text": "Sunny."},
    ]
    assert done["usage"]["input_tokens"] == 10 and done["usage"]["cached_input_tokens"] == 30, done["usage"]
    message = {
        "id": "01KR3QB2D20000000000000002",
        "session_id": "S1",
        "role": "assistant",
        "content": done["final_content"],
        "metadata": {"provider": "openrouter", "model": "openrouter:anthropic/claude-sonnet-4"},
        "created_at": "2026-05-08T12:00:00.000000Z",
        "schema_version": 1,
    }
    options = {"model": "openrouter:anthropic/claude-sonnet-4", "extra": {"reasoning": {"max_tokens": 2000}}}
    body_out = child.call("render", {"messages": [message], "tools": [], "options": options})["body"]
    assert body_out["model"] == "anthropic/claude-sonnet-4" and body_out["reasoning"] == {"max_tokens": 2000}
    assert body_out["messages"][0]["reasoning_details"] == [
        {"type": "reasoning.text", "text": "The user wants the weather.", "signature": "EqQBsig=="}
    ]
    assert child.close() == 0


@needs_go
def test_the_go_openrouter_child_raises_a_mid_stream_error_after_message_complete(go_openrouter_binary: Path) -> None:
    """OpenRouter reports an error during generation as a data event with an `error` member
    and finish_reason `error` (openrouter.ai/docs/api-reference/errors: "emitted in the response
    body or as an SSE data event"): the child ends the stream with message_complete(error) and
    answers the classified error (contract §6.5). turnspec's openrouter cassettes once held no
    such stream, so no check fed one; cassettes/openrouter/stream_errors.yaml does now (TC801,
    and the mid-stream-error-as-bad-request plant)."""
    body = _or_chunk({"content": "Hel"}) + _or_chunk(
        {"content": ""}, "error", error={"code": "server_error", "message": "Provider disconnected"}
    )
    child = _Child(go_openrouter_binary)
    context = {"session_id": "S1", "message_id": None, "request_id": "r1", "model": None}
    child.call("stream_open", {"stream_id": "s1", "context": context})
    assert child.proc.stdin is not None and child.proc.stdout is not None
    request = {"id": 99, "op": "stream_feed", "params": {"stream_id": "s1", "data": base64.b64encode(body).decode()}}
    child.proc.stdin.write(json.dumps(request) + "\n")
    child.proc.stdin.flush()
    answer = json.loads(child.proc.stdout.readline())
    assert answer["id"] == 99 and answer["ok"] is False, answer
    error = answer["error"]
    assert error["kind"] == "adapter_error" and error["error_class"] == "server_error", error
    # the request id is the generation's (the chunk's `id`, OpenRouter's X-Generation-Id)
    assert "Provider disconnected" in error["message"] and error["request_id"] == "gen-1", error
    assert [e["type"] for e in error["events"]] == ["message_start", "text_delta", "message_complete"]
    assert error["events"][-1]["stop_reason"] == "error"
    assert child.call("cancel", {"request_id": "r1", "delivered": 1}) == {"in_flight": False, "events": []}
    assert child.close() == 0


@needs_go
@pytest.mark.parametrize(("line", "says"), [(b"nope\n", "is not JSON"), (b"[1]\n", "is not a JSON object")])
def test_the_go_openrouter_child_refuses_a_line_off_the_protocol_in_one_line(
    go_openrouter_binary: Path, line: bytes, says: str
) -> None:
    _assert_refuses_off_protocol_line([str(go_openrouter_binary)], line, says, "goroutine ")


class _Child:
    """One session with a child over the protocol, a request line and its answer at a time."""

    def __init__(self, binary: Path | list[str]) -> None:
        self.proc = subprocess.Popen(
            [str(binary)] if isinstance(binary, Path) else binary,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.n = 0

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.n += 1
        self.proc.stdin.write(json.dumps({"id": self.n, "op": op, "params": params}) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.n and answer["ok"], answer
        return dict(answer["result"])

    def close(self) -> int:
        self.call("shutdown", {})
        return self.proc.wait(timeout=30)


def _reply(created_at: str, call: dict[str, Any]) -> dict[str, Any]:
    """A non-streamed /api/chat reply of the tool-calling guide's shape (docs.ollama.com/capabilities/tool-calling)."""
    return {
        "model": "qwen3",
        "created_at": created_at,
        "message": {"role": "assistant", "content": "", "tool_calls": [call]},
        "done_reason": "stop",
        "done": True,
        "prompt_eval_count": 20,
        "eval_count": 5,
    }


@needs_go
def test_the_go_ollama_child_mints_ids_from_the_reply_and_keeps_issued_ones(go_ollama_binary: Path) -> None:
    """In one session: the same id-less reply parsed again, or streamed in 3-byte chunks, finds
    the same call; a later reply (another created_at) repeating the call is a new call; an id the
    server issued is the provider id as it is; rendering the parsed turn back writes the provider
    id on the call and on the tool message answering it (`tool_call_id`, beside `tool_name`)."""
    call = {"function": {"name": "get_temperature", "arguments": {"city": "New York"}}}
    first, later = _reply("2025-05-27T22:54:57Z", call), _reply("2025-05-27T22:55:30Z", call)
    issued = _reply("2025-11-06T10:00:00Z", {"id": "call_k3v9x2qa", **call})
    child = _Child(go_ollama_binary)
    child.call("hello", {"protocol_versions": [1], "turnspec": "test"})
    context = {"session_id": "S1", "message_id": None, "request_id": "r1", "model": "ollama:qwen3"}

    def parsed(body: dict[str, Any]) -> dict[str, Any]:
        return dict(child.call("parse", {"response": {"status": 200, "headers": {}, "body": body}, "context": context}))

    a, again, b, c = (
        parsed(first)["message"],
        parsed(first)["message"],
        parsed(later)["message"],
        parsed(issued)["message"],
    )
    ids = [m["content"][0]["id"] for m in (a, again, b, c)]
    assert ids[0] == ids[1] and len(set(ids)) == 3 and all(i.startswith("tu_") for i in ids), ids
    assert a["metadata"]["status"] == "complete" and a["metadata"]["usage"]["input_tokens"] == 20
    child.call("stream_open", {"stream_id": "s1", "context": context})
    wire = (json.dumps(first) + "\n").encode()
    events = []
    for k in range(0, len(wire), 3):
        chunk = base64.b64encode(wire[k : k + 3]).decode()
        events += child.call("stream_feed", {"stream_id": "s1", "data": chunk})["events"]
    events += child.call("stream_close", {"stream_id": "s1"})["events"]
    starts = [e for e in events if e["type"] == "tool_use_start"]
    assert [e["tool_use_id"] for e in starts] == ids[:1], events
    assert events[-1]["type"] == "message_complete" and events[-1]["stop_reason"] == "tool_use", events
    pairs = dict(map(tuple, child.call("tool_id_map", {"session_id": "S1", "call": "pairs", "args": []})["value"]))
    assert len(pairs) == 3 and pairs[ids[3]] == "call_k3v9x2qa", pairs
    assert all(re.fullmatch(r"call_[A-Za-z0-9]+", p) for p in pairs.values()), pairs
    result = {"type": "tool_result", "tool_use_id": ids[0], "content": [{"type": "text", "text": "22°C"}]}
    tool = {**a, "id": "m2", "role": "tool", "content": [result], "metadata": {"parent_tool_use_id": ids[0]}}
    options = {"model": "ollama:qwen3", "stream": False}
    body = child.call("render", {"messages": [a, tool], "tools": [], "options": options})["body"]
    assert body["messages"][0]["tool_calls"][0]["id"] == pairs[ids[0]], body
    assert body["messages"][1] == {
        "role": "tool",
        "content": "22°C",
        "tool_name": "get_temperature",
        "tool_call_id": pairs[ids[0]],
    }, body
    assert child.close() == 0


@needs_go
def test_random_ids_minted_by_the_go_ollama_child_are_allowed_but_advised_against(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fresh random id for every id-less call is allowed (canonical §6.2 asks a per-session
    bijective map, not determinism): the run passes with TC306, advisory, a warning, which fails
    only with --strict, naming the re-minted calls."""
    child = shlex.quote(
        str(
            _planted_go(
                tmp_path,
                "pid = mintedID(r.Model, r.CreatedAt, position, c.Function.Name, []byte(encode(input)))",
                "pid = randomToolID()\n\t\t_ = position",
            )
        )
    )
    rc, report = _conform(capsys, child, "--select", "TC303", "--select", "TC306", "--select", "TC607")
    statuses = {k: r["status"] for k, r in _results(report).items()}
    assert rc == 0 and statuses == {"TC303": "pass", "TC306": "warn", "TC607": "pass"}, statuses
    rc, report = _conform(capsys, child, "--select", "TC306", "--strict")
    result = _results(report)["TC306"]
    assert rc == 1 and result["status"] == "fail", result
    assert any("minted other ids" in why for why in result["reasons"]), result


# -- the records the children read: Gemini's content filters as `error` --------------------


def test_gemini_content_filters_may_end_as_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """TC903 accepts `error` (status error) for Gemini's filter finish reasons beside the
    record's end_turn: the reference adapter made to read them so passes, and fails without
    the record's `stop_reasons_also` (the reading the Go child takes)."""
    filters = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "OTHER")
    api = registry.get("gemini-generate-content")
    assert all(api.stop_reasons_also[x] == ("error",) for x in filters)
    as_error = {**gemini_adapter.STOP_REASONS, **dict.fromkeys(filters, "error")}
    monkeypatch.setattr(gemini_adapter, "STOP_REASONS", as_error)
    args = ["conform", "gemini", "--no-samples", "--select", "TC903", "-o", "json"]
    rc = main(args)
    result = _results(json.loads(capsys.readouterr().out))["TC903"]
    assert rc == 0 and result["status"] == "pass" and result["cases_run"] > 20, result
    bare = replace(api, stop_reasons_also={})
    monkeypatch.setattr(registry, "APIS", tuple(bare if x.name == api.name else x for x in registry.APIS))
    rc = main(args)
    result = _results(json.loads(capsys.readouterr().out))["TC903"]
    assert rc == 1 and any("'SAFETY'" in why for why in result["reasons"]), result


# -- the Python child (OpenAI Responses), the standard library only --------------------------


def _python(child: Path) -> str:
    """The child under this interpreter with no site-packages (`-S`) in isolated mode (`-I`)."""
    return f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(child))}"


def _assert_standard_library_only(child: Path) -> None:
    """Every module `child` imports is the standard library's (an outsider's script, never turnspec)."""
    tree = ast.parse(child.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported - set(
        sys.stdlib_module_names
    )


def _assert_refuses_off_protocol_line(argv: list[str], line: bytes, says: str, trace: str) -> None:
    """Nothing to answer (no `id`): the child says which line on standard error, in one line
    with no stack trace (`trace`: how its language starts one), and exits 2."""
    done = subprocess.run(argv, input=line, capture_output=True, timeout=60, check=False)
    err = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b"", (done.returncode, done.stdout)
    assert err.count("\n") == 1 and f"standard input line 1 {says}" in err and trace not in err, err


def _passes_on_samples(
    capsys: pytest.CaptureFixture[str], command: str, samples: Path, least: tuple[tuple[str, int], ...]
) -> None:
    """`command` passes conform over the real recordings, each check of `least` with at least
    that many cases run."""
    rc = main(["conform", f"exec:{command}", "--samples", str(samples / "wire"), "-o", "json"])
    results = _results(json.loads(capsys.readouterr().out))
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    for rule, n in least:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] >= n, (rule, results[rule])


def test_the_responses_child_imports_the_standard_library_only() -> None:
    _assert_standard_library_only(RESPONSES_CHILD)


def test_the_responses_child_passes_smoke_and_conform(capsys: pytest.CaptureFixture[str]) -> None:
    _passes(capsys, _python(RESPONSES_CHILD), RESPONSES_EXERCISED)


@pytest.mark.parametrize(
    ("old", "new", "rule", "words"),
    [
        # `status: "incomplete"` read as a finished turn: the truncation streams as end_turn
        (
            'return "end_turn" if reason == "content_filter" else "max_tokens"',
            'return "end_turn"',
            "TC903",
            "streamed stop_reason 'end_turn', recorded 'max_output_tokens' = 'max_tokens'",
        ),
        # the API's input_tokens already hold the cached ones: adding them counts them twice
        (
            '"input_tokens": max(total_in - cached, 0),',
            '"input_tokens": total_in + cached,',
            "TC904",
            "input_tokens: parsed 2606, recorded 46",
        ),
        # a reasoning item sent back without its encrypted_content (stateless replay breaks)
        (
            'item["encrypted_content"] = block["signature"]',
            "pass",
            "TC802",
            "/input/1/encrypted_content: missing from rendered",
        ),
        # an assistant refusal replayed as output_text: the history says the model answered
        (
            'part = {"type": "refusal", "refusal": block.get("text", "")}',
            'part = {"type": "output_text", "text": block.get("text", "")}',
            "TC802",
            '/input/1/content/0/type: recorded "refusal", rendered "output_text"',
        ),
        # stop sequences left off the wire without the option_dropped WARN line
        ('    if options.get("stop_sequences"):', "    if False:", "TC105", "no WARN line names it"),
        # `response.failed` only ends the stream with stop_reason error: nothing raises
        (
            'if kind == "response.failed":  # the provider reported an error mid-stream (contract §6.5)',
            "if False:",
            "TC801",
            "reports an error mid-stream, and the adapter raised no AdapterError",
        ),
        # OpenAI's `retry-after-ms` header ignored: a 429 carries no retry hint
        (
            '(("retry-after-ms", 1000.0), ("retry-after", 1.0))',
            '(("retry-after", 1.0),)',
            "TC801",
            "retry_after_seconds=None, recorded hint 0.24",
        ),
    ],
    ids=[
        "incomplete-as-end-turn",
        "cached-counted-twice",
        "encrypted-content-dropped",
        "refusal-as-text",
        "stop-dropped-silently",
        "failed-response-not-raised",
        "retry-after-ms-ignored",
    ],
)
def test_a_defect_planted_in_the_responses_child_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, rule: str, words: str
) -> None:
    child = _planted(tmp_path, RESPONSES_CHILD, old, new)
    reasons = _failing(capsys, _python(child), rule)
    assert any(words in why for why in reasons), reasons


def test_the_responses_child_passes_conform_on_real_recordings(
    samples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pydantic-ai's and simonw/llm's recorded Responses traffic (reasoning items with their
    encrypted_content, `description: null` tools, `tool_choice`, `include`, `store: false`):
    every check passes, TC701 over real usage counts included (the child counts an encrypted
    reasoning item as the reasoning the API decrypts, not as its summary)."""
    least = (("TC102", 50), ("TC607", 15), ("TC701", 20), ("TC802", 80), ("TC904", 30))
    _passes_on_samples(capsys, _python(RESPONSES_CHILD), samples, least)


@pytest.mark.parametrize(("line", "says"), [(b"nope\n", "is not UTF-8 JSON"), (b"[1]\n", "is not a JSON object")])
def test_the_responses_child_refuses_a_line_off_the_protocol_in_one_line(line: bytes, says: str) -> None:
    _assert_refuses_off_protocol_line([sys.executable, "-I", "-S", str(RESPONSES_CHILD)], line, says, "Traceback")


def test_a_failed_response_parses_to_the_error_it_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 200 Response whose `status` is `failed` reports its error in the body: the child answers
    the adapter_error of its `error.code`, as turnspec's own Responses adapter raises (no check
    scripts this status for a whole response: the record's field for it is ambiguous)."""
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1741476542,
        "status": "failed",
        "error": {"code": "server_error", "message": "The model failed to generate a response."},
        "model": "gpt-5-2025-08-07",
        "output": [],
        "usage": None,
    }
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(body))
    for adapter in ("openai-responses", f"exec:{_python(RESPONSES_CHILD)}"):
        assert main(["wire", "parse", "--adapter", adapter, str(path)]) == 1
        out = capsys.readouterr()
        assert json.loads(out.out)["error_class"] == "server_error", (adapter, out)
        assert "HTTP 200: ServerError (server_error)" in out.err, (adapter, out.err)


# -- the Python child (Gemini generateContent), the standard library only ----------------------

GEMINI_CHILD = DATA / "gemini_child.py"
GEMINI_EXERCISED = (
    "TC101",  # parse: routing, disjoint usage, modelVersion as the served model, status
    "TC102",  # read_request: systemInstruction, model turns, functionResponse parts as tool messages
    "TC105",  # generationConfig: maxOutputTokens, temperature, stopSequences
    "TC109",  # POST /v1beta/models/{model}:generateContent, the model raw and without `google:`
    "TC201",  # drop records
    "TC203",  # critical_key: a typed critical_block error
    "TC303",  # ids minted for id-less calls rename consistently
    "TC305",  # function responses paired with their calls
    "TC405",  # thoughtSignature back on the part it came on, thought summaries back as thought parts
    "TC501",
    "TC601",
    "TC606",  # a stream's aggregate equals the parse (the empty text part of a last chunk adds nothing)
    "TC607",  # SSE events and JSON-array elements cut across chunks
    "TC611",
    "TC801",  # Google's error body, details[].reason, an error element mid-stream
    "TC802",  # round trip through provider_raw (id-less calls stay id-less, `parameters`, alt)
    "TC902",  # functionResponse `error` key
    "TC903",  # promptFeedback.blockReason is error, STOP with functionCall parts tool_use
    "TC904",  # cachedContentTokenCount out of input, thoughtsTokenCount in output
    "TC907",
)


def test_the_gemini_child_imports_the_standard_library_only() -> None:
    _assert_standard_library_only(GEMINI_CHILD)


def test_the_gemini_child_passes_smoke_and_conform(capsys: pytest.CaptureFixture[str]) -> None:
    _passes(capsys, _python(GEMINI_CHILD), GEMINI_EXERCISED)


@pytest.mark.parametrize(
    ("old", "new", "rule", "words"),
    [
        # a signature-only thinking block never put back on the part after it
        (
            '                part["thoughtSignature"] = pending\n                pending = None',
            "                pending = None",
            "TC405",
            "signature(s) the response carries not sent back in gemini-generate-content's signature field",
        ),
        # `thought: true` parts read as answer text: the summary goes back as the model's words
        (
            '        if part.get("thought") and isinstance(part.get("text"), str):',
            "        if False:",
            "TC405",
            "thinking text sent back as ''",
        ),
        # a prompt blocked before any candidate read as a complete empty reply
        (
            'return "error"  # promptFeedback.blockReason',
            'return "end_turn"  # promptFeedback.blockReason',
            "TC903",
            "recorded 'promptFeedback.blockReason (no candidates)' = 'error'",
        ),
        # promptTokenCount already holds the cached tokens: adding them counts them twice
        (
            '"input_tokens": max(prompt - cached, 0),',
            '"input_tokens": prompt + cached,',
            "TC904",
            "input_tokens: parsed 646792, recorded 8",
        ),
        # the canonical id in the path: `google:conformance-model` is no Gemini model
        (
            '    model = urllib.parse.unquote(wire_model(str(options.get("model") or "")))',
            '    model = str(options.get("model") or "")',
            "TC109",
            "the path names model 'google:conformance-model'",
        ),
        # an `{"error": ...}` element mid-stream taken for the end of the stream
        (
            "            raise error_from(None, {}, value, self.context)",
            "            return",
            "TC801",
            "want a ServerError",
        ),
        # a JSON-array element cut across two chunks is lost
        (
            "        if self.depth >= 2:\n            self.buffer = buf[self.start_at :]",
            "        if False:\n            self.buffer = buf[self.start_at :]",
            "TC607",
            "7-byte chunks gave different events than one chunk",
        ),
    ],
    ids=[
        "signature-not-sent-back",
        "thoughts-as-text",
        "blocked-prompt-as-complete",
        "cached-counted-twice",
        "model-prefix-kept",
        "stream-error-element-ignored",
        "array-chunk-boundary-blind",
    ],
)
def test_a_defect_planted_in_the_gemini_child_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, rule: str, words: str
) -> None:
    child = _planted(tmp_path, GEMINI_CHILD, old, new)
    reasons = _failing(capsys, _python(child), rule)
    assert any(words in why for why in reasons), reasons


def test_the_gemini_child_passes_conform_on_real_recordings(samples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pydantic-ai's and simonw/llm-gemini's recorded Gemini traffic (proto field names such as
    `parameters_json_schema`, a lone Tool object for `tools`, Gemini 3 thoughtSignatures, search
    tools whose prompt is `toolUsePromptTokenCount`): every check passes, TC701 included."""
    least = (("TC102", 50), ("TC701", 15), ("TC802", 50), ("TC904", 30))
    _passes_on_samples(capsys, _python(GEMINI_CHILD), samples, least)


def _gemini_reply(response_id: str) -> dict[str, Any]:
    """A generateContent reply calling one function with no id (ai.google.dev function-calling guide)."""
    return {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "get_current_temperature", "args": {"location": "London"}}}],
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 41, "candidatesTokenCount": 10, "totalTokenCount": 51},
        "modelVersion": "gemini-2.5-flash",
        "responseId": response_id,
    }


def test_the_gemini_child_mints_ids_from_the_reply_and_sends_them_back() -> None:
    """In one session: the same id-less reply parsed again, or streamed as a JSON array in 3-byte
    chunks, finds the same call; a later reply (another responseId) repeating the call is a new
    call; rendering the turn back writes the minted id on the functionCall and on the
    functionResponse answering it; a recorded request whose call had no id reads back and
    renders without one."""
    child = _Child([sys.executable, "-I", "-S", str(GEMINI_CHILD)])
    child.call("hello", {"protocol_versions": [1], "turnspec": "test"})
    context = {"session_id": "S1", "message_id": None, "request_id": "r1", "model": "google:gemini-2.5-flash"}

    def parsed(body: dict[str, Any]) -> dict[str, Any]:
        return dict(child.call("parse", {"response": {"status": 200, "headers": {}, "body": body}, "context": context}))

    first, again, later = (parsed(_gemini_reply(r))["message"] for r in ("resp-A", "resp-A", "resp-B"))
    ids = [m["content"][0]["id"] for m in (first, again, later)]
    assert ids[0] == ids[1] != ids[2] and all(i.startswith("tu_") for i in ids), ids
    assert first["metadata"]["status"] == "complete" and first["metadata"]["model"] == "google:gemini-2.5-flash"
    child.call("stream_open", {"stream_id": "s1", "context": context})
    wire = json.dumps([_gemini_reply("resp-A")], indent=2).encode()
    events = []
    for k in range(0, len(wire), 3):
        chunk = base64.b64encode(wire[k : k + 3]).decode()
        events += child.call("stream_feed", {"stream_id": "s1", "data": chunk})["events"]
    events += child.call("stream_close", {"stream_id": "s1"})["events"]
    assert [e["tool_use_id"] for e in events if e["type"] == "tool_use_start"] == ids[:1], events
    assert events[-1]["type"] == "message_complete" and events[-1]["stop_reason"] == "tool_use", events
    pairs = dict(map(tuple, child.call("tool_id_map", {"session_id": "S1", "call": "pairs", "args": []})["value"]))
    assert len(pairs) == 2, pairs
    result = {"type": "tool_result", "tool_use_id": ids[0], "content": [{"type": "text", "text": "12 C"}]}
    tool = {**first, "id": "m2", "role": "tool", "content": [result], "metadata": {"parent_tool_use_id": ids[0]}}
    options = {"model": "google:gemini-2.5-flash", "stream": False}
    rendered = child.call("render", {"messages": [first, tool], "tools": [], "options": options})
    assert rendered["path"] == "/v1beta/models/gemini-2.5-flash:generateContent", rendered
    model_turn, answer = rendered["body"]["contents"]
    assert model_turn["parts"][0]["functionCall"]["id"] == pairs[ids[0]], rendered
    assert answer == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": pairs[ids[0]],
                    "name": "get_current_temperature",
                    "response": {"output": "12 C"},
                }
            }
        ],
    }, answer
    call = {"functionCall": {"name": "get_current_temperature", "args": {"location": "London"}}}
    recorded = {
        "contents": [
            {"role": "user", "parts": [{"text": "London?"}]},
            {"role": "model", "parts": [call]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_current_temperature", "response": {"output": "12 C"}}}],
            },
        ]
    }
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    back = child.call(
        "read_request", {"body": recorded, "url": url, "method": "POST", "headers": {}, "session_id": "S2"}
    )
    assert back["options"]["model"] == "google:gemini-2.5-flash" and back["options"]["stream"] is True, back
    again_rendered = child.call("render", back)
    assert again_rendered["body"] == recorded, again_rendered["body"]
    assert again_rendered["path"].endswith(":streamGenerateContent"), again_rendered["path"]  # no ?alt=sse: an array
    assert child.close() == 0


@pytest.mark.parametrize(("line", "says"), [(b"nope\n", "is not UTF-8 JSON"), (b"[1]\n", "is not a JSON object")])
def test_the_gemini_child_refuses_a_line_off_the_protocol_in_one_line(line: bytes, says: str) -> None:
    _assert_refuses_off_protocol_line([sys.executable, "-I", "-S", str(GEMINI_CHILD)], line, says, "Traceback")


def test_the_gemini_child_ends_a_stream_cut_before_its_finish_reason_in_error() -> None:
    """Contract §6.5: a stream that ends before its stop reason yields message_complete with
    stop_reason error (the text that arrived) and fails with a located wire_format error; a
    cancel after it finds the stream over."""
    child = _Child([sys.executable, "-I", "-S", str(GEMINI_CHILD)])
    child.call("hello", {"protocol_versions": [1], "turnspec": "test"})
    context = {"session_id": "S1", "message_id": "M1", "request_id": "r1", "model": "google:gemini-2.5-flash"}
    child.call("stream_open", {"stream_id": "s1", "context": context})
    element = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Once upon"}]}, "index": 0}]}
    data = base64.b64encode(f"data: {json.dumps(element)}\r\n\r\n".encode()).decode()
    events = child.call("stream_feed", {"stream_id": "s1", "data": data})["events"]
    assert [e["type"] for e in events] == ["message_start", "text_delta"], events
    assert child.proc.stdin is not None and child.proc.stdout is not None
    child.proc.stdin.write(json.dumps({"id": 99, "op": "stream_close", "params": {"stream_id": "s1"}}) + "\n")
    child.proc.stdin.flush()
    answer = json.loads(child.proc.stdout.readline())
    assert answer["id"] == 99 and not answer["ok"] and answer["error"]["kind"] == "wire_format", answer
    assert "ended before a finishReason" in answer["error"]["message"], answer
    (complete,) = answer["error"]["events"]
    assert complete["stop_reason"] == "error" and complete["final_content"] == [{"type": "text", "text": "Once upon"}]
    assert child.call("cancel", {"request_id": "r1", "delivered": 1}) == {"in_flight": False, "events": []}
    assert child.close() == 0


def test_the_gemini_child_cancels_with_the_image_no_event_carried_once_an_event_after_it_was_delivered() -> None:
    """docs/exec-protocol.md, cancel: a block no event carries (a generated image's inlineData
    part) is part of the partial content once an event after it was delivered, at its own index."""
    child = _Child([sys.executable, "-I", "-S", str(GEMINI_CHILD)])
    child.call("hello", {"protocol_versions": [1], "turnspec": "test"})
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    parts = [{"text": "Here:"}, {"inlineData": {"mimeType": "image/png", "data": png}}, {"text": " done"}]
    wire = "".join(
        "data: " + json.dumps({"candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}]}) + "\n\n"
        for p in parts
    )
    contents = []
    for n, delivered in enumerate((2, 3)):
        context = {"session_id": "S1", "message_id": f"M{n}", "request_id": f"r{n}", "model": "google:gemini-2.5-flash"}
        child.call("stream_open", {"stream_id": f"s{n}", "context": context})
        data = base64.b64encode(wire.encode()).decode()
        events = child.call("stream_feed", {"stream_id": f"s{n}", "data": data})["events"]
        assert [e["type"] for e in events] == ["message_start", "text_delta", "text_delta"], events
        cancelled = child.call("cancel", {"request_id": f"r{n}", "delivered": delivered})
        assert cancelled["in_flight"] is True and cancelled["events"][-1]["stop_reason"] == "cancelled", cancelled
        contents.append(cancelled["events"][-1]["final_content"])
    image = {"type": "image", "source": {"kind": "base64", "data": png}, "media_type": "image/png"}
    assert contents == [
        [{"type": "text", "text": "Here:"}],
        [{"type": "text", "text": "Here:"}, image, {"type": "text", "text": " done"}],
    ], contents
    assert child.close() == 0


# -- the Node child (OpenAI Chat Completions) ------------------------------------------------


@needs_node
def test_the_chat_child_passes_smoke_and_conform(capsys: pytest.CaptureFixture[str]) -> None:
    _passes(capsys, f"node {shlex.quote(str(CHAT_CHILD))}", CHAT_EXERCISED)


@needs_node
@pytest.mark.parametrize(
    ("old", "new", "rule", "words"),
    [
        # a streaming request without stream_options.include_usage: the stream reports no usage
        (
            "body.stream_options = { ...(streamOptions || {}), include_usage: true };",
            "if (streamOptions) body.stream_options = streamOptions;",
            "TC905",
            "lacks /stream_options/include_usage",
        ),
        # each arguments fragment put before the ones already read, not after
        (
            "block.partial += fn.arguments;",
            "block.partial = fn.arguments + block.partial;",
            "TC604",
            "final_input differs from the JSON its deltas spell",
        ),
        # every call ended at finish_reason: the first call's end comes after the second's index
        (
            "    closeCalls(stream, out);\n    const providerId",
            "    const providerId",
            "TC602",
            "(tool_use_end) index 0 after 1",
        ),
        # prompt_tokens already holds the cached ones: adding them counts them twice
        (
            "input_tokens: Math.max((usage.prompt_tokens ?? 0) - cached, 0),",
            "input_tokens: (usage.prompt_tokens ?? 0) + cached,",
            "TC904",
            "input_tokens: parsed 3926, recorded 86",
        ),
        # `length` read as a natural end: a truncated reply looks finished
        (
            'length: "max_tokens", tool_calls',
            'length: "end_turn", tool_calls',
            "TC903",
            "streamed stop_reason 'end_turn', recorded 'length' = 'max_tokens'",
        ),
        # `content_filter` read as a truncation
        (
            'content_filter: "end_turn",',
            'content_filter: "max_tokens",',
            "TC903",
            "streamed stop_reason 'max_tokens', recorded 'content_filter' = 'end_turn' or 'error'",
        ),
        # OpenAI's `retry-after-ms` header ignored: only `retry-after` read
        (
            'const ms = Number(headerValue(headers, "retry-after-ms"));',
            "const ms = NaN;",
            "TC801",
            "HTTP 429: retry_after_seconds=None, recorded hint 0.2",
        ),
    ],
    ids=[
        "usage-not-requested",
        "fragments-out-of-order",
        "calls-ended-at-the-stop",
        "cached-counted-twice",
        "length-as-end-turn",
        "content-filter-as-max-tokens",
        "retry-after-ms-ignored",
    ],
)
def test_a_defect_planted_in_the_chat_child_fails_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, rule: str, words: str
) -> None:
    child = _planted(tmp_path, CHAT_CHILD, old, new)
    reasons = _failing(capsys, f"node {shlex.quote(str(child))}", rule)
    assert any(words in why for why in reasons), reasons


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
    """One `data:` line of a `chat.completion.chunk` (platform.openai.com/docs/api-reference/chat-streaming)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741569952, "model": "gpt-4o-2024-08-06"}
    return b"data: " + json.dumps({**chunk, "choices": choices, **extra}).encode() + b"\n\n"


def _call(index: int, *, id: str | None = None, name: str | None = None, arguments: str = "") -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        call.update(id=id, type="function")
    if name is not None:
        call["function"]["name"] = name
    return {"tool_calls": [call]}


@needs_node
def test_the_chat_child_joins_streamed_call_fragments_by_index() -> None:
    """Two parallel calls streamed as OpenAI's docs show them, fed 3 bytes at a time: each call
    opens once with its issued id, its `arguments` fragments go out as they came, it ends before
    the next call's index opens, and the usage chunk after finish_reason (empty `choices`) gives
    disjoint buckets; a reply with no call ids (a compatible server) gets the same minted ids
    when parsed again, and rendering it back sends them on the call and on `tool_call_id`."""
    wire = b"".join(
        [
            _chunk({"role": "assistant", "content": None, **_call(0, id="call_a1", name="get_weather")}),
            _chunk(_call(0, arguments='{"location":')),
            _chunk(_call(0, arguments=' "Paris"}')),
            _chunk(_call(1, id="call_b2", name="get_weather")),
            _chunk(_call(1, arguments='{"location": "Rome"}')),
            _chunk({}, "tool_calls"),
            _chunk(
                None,
                usage={"prompt_tokens": 50, "completion_tokens": 30, "prompt_tokens_details": {"cached_tokens": 20}},
            ),
            b"data: [DONE]\n\n",
        ]
    )
    child = _Child([NODE or "node", str(CHAT_CHILD)])
    child.call("hello", {"protocol_versions": [1], "turnspec": "test"})
    context = {"session_id": "S1", "message_id": "M1", "request_id": "r1", "model": "openai:gpt-4o"}
    child.call("stream_open", {"stream_id": "s1", "context": context})
    events: list[dict[str, Any]] = []
    for k in range(0, len(wire), 3):
        chunk = base64.b64encode(wire[k : k + 3]).decode()
        events += child.call("stream_feed", {"stream_id": "s1", "data": chunk})["events"]
    events += child.call("stream_close", {"stream_id": "s1"})["events"]
    kinds = [(e["type"], e.get("content_block_index")) for e in events]
    assert kinds == [
        ("message_start", None),
        ("tool_use_start", 0),
        ("tool_use_input_delta", 0),
        ("tool_use_input_delta", 0),
        ("tool_use_end", 0),
        ("tool_use_start", 1),
        ("tool_use_input_delta", 1),
        ("tool_use_end", 1),
        ("message_complete", None),
    ], kinds
    assert [e["partial_json"] for e in events if e["type"] == "tool_use_input_delta"] == [
        '{"location":',
        ' "Paris"}',
        '{"location": "Rome"}',
    ]
    done = events[-1]
    assert done["stop_reason"] == "tool_use" and [b["input"] for b in done["final_content"]] == [
        {"location": "Paris"},
        {"location": "Rome"},
    ], done
    assert done["usage"] == {
        "input_tokens": 30,
        "output_tokens": 30,
        "cached_input_tokens": 20,
        "cache_creation_input_tokens": 0,
    }, done
    pairs = dict(map(tuple, child.call("tool_id_map", {"session_id": "S1", "call": "pairs", "args": []})["value"]))
    assert sorted(pairs.values()) == ["call_a1", "call_b2"], pairs

    reply = {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 1741569960,
        "model": "llama3.2",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    context = {**context, "message_id": None}

    def parsed(body: dict[str, Any]) -> dict[str, Any]:
        response = {"status": 200, "headers": {}, "body": body}
        return dict(child.call("parse", {"response": response, "context": context})["message"])

    first, again, later = parsed(reply), parsed(reply), parsed({**reply, "id": "chatcmpl-3"})
    ids = [m["content"][0]["id"] for m in (first, again, later)]
    assert ids[0] == ids[1] != ids[2], ids
    minted = child.call("tool_id_map", {"session_id": "S1", "call": "get_provider", "args": [ids[0]]})["value"]
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", minted), minted
    result = {"type": "tool_result", "tool_use_id": ids[0], "content": [{"type": "text", "text": "22°C"}]}
    tool = {**first, "id": "m2", "role": "tool", "content": [result], "metadata": {"parent_tool_use_id": ids[0]}}
    body = child.call("render", {"messages": [first, tool], "tools": [], "options": {"model": "openai:gpt-4o"}})["body"]
    assert body["messages"] == [
        {
            "role": "assistant",
            "tool_calls": [{"id": minted, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": minted, "content": "22°C"},
    ], body
    assert child.close() == 0


@needs_node
def test_the_chat_child_passes_conform_on_real_recordings(samples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pydantic-ai's, simonw/llm's and openllmetry's recorded Chat Completions traffic (streamed
    parallel calls, an empty assistant message before a call, tool ids such as `"0"`): every
    check passes, TC701 over real usage counts included (tool definitions weighed as OpenAI's
    cookbook counts them)."""
    least = (("TC102", 40), ("TC607", 15), ("TC609", 5), ("TC701", 15), ("TC802", 40), ("TC904", 30))
    _passes_on_samples(capsys, f"node {shlex.quote(str(CHAT_CHILD))}", samples, least)


@needs_node
def test_the_chat_child_reads_a_refusal_as_the_reply_and_sends_it_back_as_one() -> None:
    """`message.refusal` (and a stream's `delta.refusal`) is the reply's text, as TC903 reads a
    refusal; rendered back into the history it is the assistant's `refusal` again, content null
    (platform.openai.com/docs/guides/structured-outputs, "Refusals")."""
    child = _Child([NODE or "node", str(CHAT_CHILD)])
    child.call("hello", {"protocol_versions": [1], "turnspec": "test"})
    context = {"session_id": "S1", "message_id": "M1", "request_id": "r1", "model": "openai:gpt-4o"}
    body = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "created": 1741569970,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "refusal": "I'm sorry, I cannot assist."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    }
    response = {"status": 200, "headers": {}, "body": body}
    message = child.call("parse", {"response": response, "context": context})["message"]
    assert message["content"] == [{"type": "text", "text": "I'm sorry, I cannot assist."}], message
    assert message["metadata"]["status"] == "complete" and message["metadata"]["model"] == "openai:gpt-4o-2024-08-06"
    wire = child.call("render", {"messages": [message], "tools": [], "options": {"model": "openai:gpt-4o"}})["body"]
    assert wire["messages"] == [{"role": "assistant", "content": None, "refusal": "I'm sorry, I cannot assist."}], wire
    child.call("stream_open", {"stream_id": "s1", "context": context})
    sse = (
        _chunk({"role": "assistant", "refusal": "I'm sorry"})
        + _chunk({"refusal": ", no."}, "stop")
        + b"data: [DONE]\n\n"
    )
    events = child.call("stream_feed", {"stream_id": "s1", "data": base64.b64encode(sse).decode()})["events"]
    assert [e.get("text") for e in events if e["type"] == "text_delta"] == ["I'm sorry", ", no."], events
    assert events[-1]["final_content"] == [{"type": "text", "text": "I'm sorry, no."}], events
    assert child.close() == 0


@needs_node
@pytest.mark.parametrize(("line", "says"), [(b"nope\n", "is not JSON"), (b"[1]\n", "is not a JSON object")])
def test_the_chat_child_refuses_a_line_off_the_protocol_in_one_line(line: bytes, says: str) -> None:
    _assert_refuses_off_protocol_line([NODE or "node", str(CHAT_CHILD)], line, says, "    at ")
