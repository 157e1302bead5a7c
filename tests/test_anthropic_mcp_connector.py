"""Anthropic's MCP connector (platform.claude.com/docs/en/agents-and-tools/mcp-connector):
a request names remote MCP servers in a top-level `mcp_servers` array and enables their
tools with an `mcp_toolset` entry of `tools` (no `name`: `mcp_server_name`); the reply
carries `mcp_tool_use` and `mcp_tool_result` blocks. The bodies are the doc's examples.

R's ellmer recorded such requests: the request schema refused them (a tool without `name`),
a false rejection of traffic the API answered."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.adapters import debug
from conformance.adapters.anthropic import AnthropicAdapter
from conformance.wire import registry
from conformance.wire import schemas as wire_schemas

API = "anthropic-messages"

# "Basic example" (beta header mcp-client-2025-11-20)
BASIC = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1000,
    "messages": [{"role": "user", "content": "What tools do you have available?"}],
    "mcp_servers": [
        {
            "type": "url",
            "url": "https://example-server.modelcontextprotocol.io/sse",
            "name": "example-mcp",
            "authorization_token": "YOUR_TOKEN",
        }
    ],
    "tools": [{"type": "mcp_toolset", "mcp_server_name": "example-mcp"}],
}

# "Mixed - allowlist with per-tool configuration"
MIXED_TOOLSET = {
    "type": "mcp_toolset",
    "mcp_server_name": "google-calendar-mcp",
    "default_config": {"enabled": False, "defer_loading": True},
    "configs": {"search_events": {"enabled": True, "defer_loading": False}, "list_events": {"enabled": True}},
}

# "Deprecated version: mcp-client-2025-04-04": tool configuration inside the server definition
DEPRECATED_SERVER = {
    "type": "url",
    "url": "https://example-server.modelcontextprotocol.io/sse",
    "name": "example-mcp",
    "authorization_token": "YOUR_TOKEN",
    "tool_configuration": {"enabled": True, "allowed_tools": ["example_tool_1", "example_tool_2"]},
}

# "Response content types"
MCP_USE = {
    "type": "mcp_tool_use",
    "id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
    "name": "echo",
    "server_name": "example-mcp",
    "input": {"param1": "value1", "param2": "value2"},
}
MCP_RESULT = {
    "type": "mcp_tool_result",
    "tool_use_id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
    "is_error": False,
    "content": [{"type": "text", "text": "Hello"}],
}


def _errors(kind: str, body: Any) -> list[str]:
    v = wire_schemas.validator(registry.get(API), kind)
    assert v is not None
    return [f"{e.pointer}: {e.message}" for e in v.errors(body)]


def _reply(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def test_the_documented_mcp_connector_requests_are_accepted():
    assert _errors("request", BASIC) == []
    assert _errors("request", {**BASIC, "tools": [{**MIXED_TOOLSET, "mcp_server_name": "example-mcp"}]}) == []
    assert _errors("request", {**BASIC, "mcp_servers": [DEPRECATED_SERVER], "tools": []}) == []
    # the reply's blocks sent back in the assistant turn of the next request
    history = [*BASIC["messages"], {"role": "assistant", "content": [MCP_USE, MCP_RESULT]}]
    assert _errors("request", {**BASIC, "messages": [*history, {"role": "user", "content": "Thanks"}]}) == []


@pytest.mark.parametrize(
    ("where", "bad"),
    [
        # "mcp_server_name: Required. Must match a server name defined in the mcp_servers array"
        ("tools", [{"type": "mcp_toolset"}]),
        # tool configuration options: enabled and defer_loading, booleans
        ("tools", [{**MIXED_TOOLSET, "default_config": {"enabled": "no"}}]),
        ("tools", [{**MIXED_TOOLSET, "configs": {"search_events": {"hidden": True}}}]),
        # "type: Required. Currently only "url" is supported"
        ("mcp_servers", [{**BASIC["mcp_servers"][0], "type": "stdio"}]),
        # "url: Required. The URL of the MCP server. Must start with https://"
        ("mcp_servers", [{**BASIC["mcp_servers"][0], "url": "http://example-server.modelcontextprotocol.io/sse"}]),
        # "name: Required."
        ("mcp_servers", [{"type": "url", "url": "https://example-server.modelcontextprotocol.io/sse"}]),
    ],
)
def test_an_mcp_connector_field_against_the_doc_is_refused(where: str, bad: Any):
    assert _errors("request", {**BASIC, where: bad})


def test_the_reply_keeps_the_mcp_blocks():
    """The canonical format has no server-tool block: the reader keeps each as a namespaced
    block holding the wire block whole (canonical §10.3 forward compatibility), in a reply
    and in a stream, so nothing the server ran is lost."""
    reply = _reply([MCP_USE, MCP_RESULT, {"type": "text", "text": "The tool said Hello."}])
    assert _errors("response", reply) == []
    assert _errors("response", _reply([{k: v for k, v in MCP_USE.items() if k != "server_name"}]))
    message = debug.parse(AnthropicAdapter(), json.dumps(reply).encode()).message
    assert [b["type"] for b in message["content"]] == ["anthropic:mcp_tool_use", "anthropic:mcp_tool_result", "text"]
    assert [b.get("raw") for b in message["content"][:2]] == [MCP_USE, MCP_RESULT]


def test_a_streamed_mcp_tool_use_is_kept_with_its_input():
    start = {**MCP_USE, "input": {}}
    events = [
        {"type": "message_start", "message": {**_reply([]), "stop_reason": None}},
        {"type": "content_block_start", "index": 0, "content_block": start},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps(MCP_USE["input"])}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": MCP_RESULT},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]  # fmt: skip
    assert [e for e in events if _errors("stream-event", e)] == []
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    message = debug.parse(AnthropicAdapter(), sse, stream=True).message
    assert [b.get("raw") for b in message["content"]] == [MCP_USE, MCP_RESULT]
