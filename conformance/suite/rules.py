"""The conformance suite's checks: stable TC ids, each citing the spec section it enforces.

Sections cite seed 003 (`canonical-message-format.md`, "§") unless they name the adapter
contract (`provider-adapter-contract.md`, "contract §") or the streaming protocol
(`streaming-protocol.md`, "streaming §"). TC0xx contract shape, TC1xx output invariants,
TC2xx lossy projection, TC3xx tool ids, TC4xx cross-provider replay, TC5xx capability
honesty, TC6xx streaming, TC7xx token estimates, TC8xx recorded traffic.
"""

from __future__ import annotations

from ..findings import RuleCatalog, RuleInfo, Severity

E = Severity.ERROR
W = Severity.WARNING  # advisory: reported, never fails the run unless --strict (RuleInfo.strict)

CAPABILITIES = RuleInfo(
    "TC001", E, "§7.2, contract §3.4", "Adapter declares valid AdapterCapabilities and its identity"
)

EXERCISED = RuleInfo(
    "TC002", E, "§7.2, contract §3.4", "Every capability declared true is exercised by at least one case"
)

RESPONSE_VALID = RuleInfo("TC101", E, "§5, §7.1", "Parsed responses validate (schemas and TS rules)")
REQUEST_VALID = RuleInfo("TC102", E, "§5, §7.1", "Messages read back from a wire request validate")
WIRE_SHAPE = RuleInfo("TC104", E, "contract §4.2, §4.3", "Rendered requests have the provider's documented shape")
REQUEST_OPTIONS = RuleInfo(
    "TC105",
    E,
    "contract §3.3, §4.2, §4.3",
    "max_output_tokens, stop_sequences and temperature reach the API's request fields",
)
EVENTS_VALID = RuleInfo("TC103", E, "§7.4, streaming §5.3", "Stream events validate against stream-event.json")

LOSSY_WARN = RuleInfo("TC201", E, "§4.2.2, §7.3", "Dropped block logs exactly one WARNING with the five fields")
LOSSY_ABSENT = RuleInfo("TC202", E, "§7.3, contract §4.4", "Dropped block is absent from the wire, never partial")
LOSSY_CRITICAL = RuleInfo("TC203", E, "§4.2.2", "Unrepresentable critical block fails with CriticalBlockError")

TOOL_ID_CANONICAL = RuleInfo("TC301", E, "§6.2, §5.2.1", "Parsed provider tool ids become canonical tu_<ULID>")
TOOL_ID_RESTORED = RuleInfo("TC302", E, "§6.2", "Serializing back to the provider restores its tool id")
TOOL_ID_INJECTIVE = RuleInfo("TC303", E, "§6.2", "Tool-id map is injective and stable across calls")
TOOL_ID_RULES = RuleInfo(
    "TC304", E, "§6.2, contract §4.1.1", "Generated provider tool ids satisfy the provider's rules"
)
TOOL_ID_PAIRED = RuleInfo("TC305", E, "§6.2, §5.2.2", "tool_use and its tool_result carry the same mapped id")
TOOL_ID_DETERMINISTIC = RuleInfo(
    "TC306",
    W,
    "§6.2, contract §4.1.1",
    "Parsing the same bytes again gives the same canonical tool ids (advisory: minted ids may differ)",
    strict=True,
)

REPLAY_PRESERVED = RuleInfo("TC401", E, "§8.3, §2.1.2", "Cross-provider replay preserves text and tool calls")
REPLAY_PAIRED = RuleInfo("TC402", E, "§8.3, §5.2.2", "Cross-provider replay pairs every tool_result with its call")
REPLAY_SYSTEM = RuleInfo(
    "TC403",
    E,
    "§3.3, contract §4.1.2",
    "System prompt hoisted or placed as the target provider needs",
)
REPLAY_DROPPED = RuleInfo("TC404", E, "§7.3, §8.3", "Blocks the target cannot carry are dropped with WARN")
REPLAY_SIGNATURE = RuleInfo(
    "TC405", E, "§6.5, §7.3", "Thinking signatures go back only to the provider that issued them"
)

CAPS_CARRIED = RuleInfo("TC501", E, "§7.2, contract §3.4", "Declared-true capabilities reach the wire")
CAPS_DROPPED = RuleInfo(
    "TC502", E, "§7.2, §7.3, contract §4.4", "Declared-false capabilities are dropped with WARN or fail cleanly"
)

STREAM_ORDER = RuleInfo(
    "TC601",
    E,
    "contract §5.2.1, §5.2.4, §6.5",
    "Stream ends with one message_complete (stop_reason error before a raise); a start event comes first",
)
STREAM_INDEX = RuleInfo("TC602", E, "contract §5.2.5", "content_block_index never decreases")
STREAM_TOOL = RuleInfo("TC603", E, "contract §5.2.2", "Each tool_use has one start, its deltas, one end")
STREAM_FINAL_INPUT = RuleInfo(
    "TC604",
    E,
    "contract §5.2.3, §5.4",
    "tool_use_end.final_input is the JSON object the deltas spell",
)
STREAM_AGGREGATE = RuleInfo("TC605", E, "streaming §5.3, §5.4", "Deltas add up to message_complete.final_content")
STREAM_EQUALS_PARSE = RuleInfo(
    "TC606",
    E,
    "contract §10.1.14, streaming §5.1",
    "Stream aggregate equals the non-streaming parse",
)
STREAM_CHUNKING = RuleInfo("TC607", E, "contract §5.1", "Splitting the byte stream differently yields the same events")
STREAM_VOCABULARY = RuleInfo(
    "TC608", E, "§7.4, streaming §5.3", "Stream events follow one naming, canonical §7.4 or streaming §5.3, never a mix"
)
STREAM_LITERAL_JSON = RuleInfo(
    "TC609", E, "contract §5.4, §10.1.7", "tool_use_input_delta.partial_json are the provider's literal fragments"
)
STREAM_SIGNATURE_LAST = RuleInfo(
    "TC610", E, "streaming §5.3", "A thinking signature rides only on the block's final thinking_delta"
)
STREAM_CANCEL = RuleInfo(
    "TC611",
    E,
    "contract §5.3, §10.1.12, streaming §6.2.1",
    "cancel(request_id) closes open tool calls ({} if unparsable) and ends with message_complete(cancelled)",
)

ESTIMATE = RuleInfo(
    "TC701",
    E,
    "contract §3.1",
    "estimate_input_tokens within the stated tolerance of recorded usage",
)

CASSETTE_API = RuleInfo("TC800", E, "§11.2", "Recorded interaction is of an API some adapter serves (else skipped)")
ERROR_CLASSIFIED = RuleInfo(
    "TC801",
    E,
    "contract §6.1-§6.3, §6.5.3",
    "Error responses and errors reported mid-stream raise a classified AdapterError",
)
REQUEST_ROUND_TRIP = RuleInfo(
    "TC802", E, "§2.1.1, §11.1.1", "Recorded request read and rendered back matches semantically"
)

IMAGES_KEPT = RuleInfo(
    "TC901", E, "§4.2, §8.3", "Image source kind, media type and bytes survive the wire and read-back"
)
TOOL_ERROR_KEPT = RuleInfo(
    "TC902", E, "§4.2, §7.3, §8.3", "tool_result is_error reaches the wire's error flag and read-back, else a WARN"
)
STOP_REASON = RuleInfo(
    "TC903",
    E,
    "§4.3, contract §3.3",
    "How a turn ended follows the recording: streamed stop_reason and a parsed message's status (record's "
    "mapping), and a recorded refusal read as the reply's text",
)
USAGE_RECORDED = RuleInfo(
    "TC904", E, "contract §7.2", "Parsed usage (input, output, cache read/write) equals the recorded body"
)
CAPS_PROBED = RuleInfo(
    "TC503",
    E,
    "§7.2, contract §3.4, §4.4",
    "Parallel and streamed tool calls, prompt caching and token limits hold when probed",
)
PROVIDER_RAW_ISOLATED = RuleInfo(
    "TC406",
    E,
    "§6.5, §9.1",
    "Another adapter's provider_raw changes nothing in the request; the adapter's own survives storage",
)
SERVED_MODEL = RuleInfo(
    "TC907", E, "contract §3.3", "The parsed model is the one the response names as having served the call"
)
USAGE_ESTIMATED = RuleInfo(
    "TC906",
    E,
    "contract §7.2",
    "Usage a response lacks is reported as none, or estimated with a WARN line noting it",
)
STREAM_USAGE_REQUESTED = RuleInfo(
    "TC905",
    E,
    "contract §7.2",
    "Streaming requests ask for usage where the API's record says usage must be requested",
)
MESSAGE_ID_FROM_CORE = RuleInfo(
    "TC108", E, "§6.1", "A parsed message's id is the one the core passed (RequestContext.message_id)"
)
ENDPOINT = RuleInfo(
    "TC109", E, "contract §4.2, §4.3", "Rendered requests POST to the endpoint the API's record documents"
)
CACHE_CONTROL_HIDDEN = RuleInfo(
    "TC110", E, "contract §4.2", "cache_control markers never reach the canonical messages read back"
)

CATALOG = RuleCatalog(
    [
        CAPABILITIES,
        EXERCISED,
        RESPONSE_VALID,
        REQUEST_VALID,
        EVENTS_VALID,
        WIRE_SHAPE,
        REQUEST_OPTIONS,
        LOSSY_WARN,
        LOSSY_ABSENT,
        LOSSY_CRITICAL,
        TOOL_ID_CANONICAL,
        TOOL_ID_RESTORED,
        TOOL_ID_INJECTIVE,
        TOOL_ID_RULES,
        TOOL_ID_PAIRED,
        TOOL_ID_DETERMINISTIC,
        REPLAY_PRESERVED,
        REPLAY_PAIRED,
        REPLAY_SYSTEM,
        REPLAY_DROPPED,
        REPLAY_SIGNATURE,
        CAPS_CARRIED,
        CAPS_DROPPED,
        STREAM_ORDER,
        STREAM_INDEX,
        STREAM_TOOL,
        STREAM_FINAL_INPUT,
        STREAM_AGGREGATE,
        STREAM_EQUALS_PARSE,
        STREAM_CHUNKING,
        ESTIMATE,
        CASSETTE_API,
        ERROR_CLASSIFIED,
        REQUEST_ROUND_TRIP,
        IMAGES_KEPT,
        TOOL_ERROR_KEPT,
        STOP_REASON,
        USAGE_RECORDED,
        STREAM_VOCABULARY,
        STREAM_LITERAL_JSON,
        STREAM_SIGNATURE_LAST,
        STREAM_CANCEL,
        PROVIDER_RAW_ISOLATED,
        CAPS_PROBED,
        STREAM_USAGE_REQUESTED,
        USAGE_ESTIMATED,
        SERVED_MODEL,
        MESSAGE_ID_FROM_CORE,
        ENDPOINT,
        CACHE_CONTROL_HIDDEN,
    ]
)

# The base test class (`suite.testing`) makes one standard test per rule of the catalogue
# (TC800 judges cassettes, not an adapter): `test_<id>_<slug>`, skipped when the adapter
# declares false the capability the rule needs. Both live here, beside the rules.
TEST_SLUGS: dict[str, str] = {
    "TC001": "capabilities_declared",
    "TC002": "declared_capabilities_exercised",
    "TC101": "responses_validate",
    "TC102": "requests_read_back_validate",
    "TC108": "message_id_from_core",
    "TC109": "documented_endpoint",
    "TC110": "cache_control_hidden",
    "TC103": "stream_events_validate",
    "TC104": "wire_request_shape",
    "TC105": "request_options_on_wire",
    "TC201": "dropped_block_warns",
    "TC202": "dropped_block_absent",
    "TC203": "critical_block_fails",
    "TC301": "parsed_tool_ids_canonical",
    "TC302": "provider_tool_ids_restored",
    "TC303": "tool_id_map_injective",
    "TC304": "provider_tool_id_rules",
    "TC305": "tool_use_and_result_paired",
    "TC306": "tool_ids_deterministic",
    "TC401": "replay_preserves_content",
    "TC402": "replay_pairs_results",
    "TC403": "replay_system_placement",
    "TC404": "replay_drops_with_warn",
    "TC405": "thinking_signatures",
    "TC501": "declared_capabilities_carried",
    "TC502": "undeclared_capabilities_dropped",
    "TC601": "stream_order",
    "TC602": "stream_index_monotonic",
    "TC603": "stream_tool_events",
    "TC604": "stream_final_input",
    "TC605": "stream_aggregate",
    "TC606": "stream_equals_parse",
    "TC607": "stream_chunking",
    "TC701": "token_estimate",
    "TC801": "errors_classified",
    "TC802": "request_round_trip",
    "TC901": "images_kept",
    "TC902": "tool_errors_kept",
    "TC903": "stop_reason_recorded",
    "TC904": "usage_recorded",
    "TC608": "stream_one_vocabulary",
    "TC609": "stream_partial_json_literal",
    "TC610": "stream_signature_on_final_delta",
    "TC611": "stream_cancel",
    "TC406": "provider_raw_isolated",
    "TC503": "capabilities_probed",
    "TC905": "stream_requests_usage",
    "TC906": "missing_usage_estimated_with_warn",
    "TC907": "served_model",
}
NEEDS: dict[str, str] = {
    "TC901": "supports_images",
    "TC902": "supports_tools",
    "TC103": "supports_streaming",
    "TC301": "supports_tools",
    "TC302": "supports_tools",
    "TC303": "supports_tools",
    "TC304": "supports_tools",
    "TC305": "supports_tools",
    "TC306": "supports_tools",
    "TC601": "supports_streaming",
    "TC602": "supports_streaming",
    "TC603": "supports_streaming_tool_calls",
    "TC604": "supports_streaming_tool_calls",
    "TC605": "supports_streaming",
    "TC606": "supports_streaming",
    "TC607": "supports_streaming",
    "TC608": "supports_streaming",
    "TC609": "supports_streaming_tool_calls",
    "TC610": "supports_thinking",
    "TC611": "supports_streaming",
    "TC905": "supports_streaming",
}
"""Rule -> the capability it needs (the rule's cases exercise that capability)."""
SUITE_ONLY = ("TC800",)
BOOLEAN_CAPABILITIES = (
    "supports_thinking",
    "supports_images",
    "supports_tools",
    "supports_system_prompt",
    "supports_structured_output",
    "supports_streaming",
    "supports_streaming_tool_calls",
    "supports_parallel_tool_calls",
    "supports_prompt_caching",
    "supports_system_messages_in_list",
)
"""The boolean fields of schemas/canonical/v1/adapter-capabilities.json (a test proves the
two agree); TC002 asks each one declared true to be exercised."""
EXERCISERS: dict[str, tuple[str, ...]] = {
    "supports_thinking": ("TC501", "TC405"),
    "supports_images": ("TC501", "TC901"),
    "supports_tools": ("TC301", "TC302", "TC303", "TC304", "TC305", "TC501", "TC902"),
    "supports_system_prompt": ("TC501", "TC403"),
    "supports_structured_output": ("TC501",),
    "supports_streaming": ("TC103", "TC601", "TC602", "TC605", "TC606", "TC607", "TC903", "TC501"),
    "supports_streaming_tool_calls": ("TC603", "TC604", "TC503"),
    "supports_parallel_tool_calls": ("TC301", "TC503"),
    "supports_prompt_caching": ("TC904", "TC503"),
    "supports_system_messages_in_list": ("TC403",),
}
"""The rules whose cases exercise a capability. TC002 judges a capability only when all of
them ran (a --select that leaves one out cannot tell), and names them when none had a case."""
"""Rules about the recordings, not an adapter: no standard test."""

# TC701: an offline heuristic cannot meet the contract's ±10% (that assumes a real
# tokenizer); the suite holds estimates to this band, calibrated on recorded usage.
ESTIMATE_REL_TOLERANCE = 0.35
ESTIMATE_ABS_TOLERANCE = 60
