"""The conformance suite's checks: stable TC ids, each citing the spec section it enforces.

Sections cite seed 003 (`canonical-message-format.md`, "§") unless they name the adapter
contract (`provider-adapter-contract.md`, "contract §") or the streaming protocol
(`streaming-protocol.md`, "streaming §"). TC0xx contract shape, TC1xx output invariants,
TC2xx lossy projection, TC3xx tool ids, TC4xx cross-provider replay, TC5xx capability
honesty, TC6xx streaming, TC7xx token estimates, TC8xx recorded traffic.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.capabilities import CAPABILITY_FIELDS
from ..core.findings import RuleCatalog, RuleInfo, Severity

E = Severity.ERROR
W = Severity.WARNING  # advisory: reported, never fails the run unless --strict (RuleInfo.strict)


@dataclass(frozen=True, slots=True)
class CheckInfo(RuleInfo):
    """A suite check, declared once: its rule (id, severity, section, summary) and what
    everything else reads from it. `slug` names the base test class's standard test
    (`test_<id>_<slug>`; empty: no standard test, the check judges recordings, not an
    adapter); `needs` is the capability it needs (declared false: skipped with that reason);
    `exercises` are the capabilities its cases exercise (TC002 counts them); `fix` is its
    troubleshooting line."""

    slug: str = ""
    needs: str | None = None
    exercises: tuple[str, ...] = ()
    fix: str = ""  # what to look at when it fails (`turnspec rule`, SARIF help, the docs)

    @property
    def troubleshooting(self) -> str:
        """`fix`, which `core.ruledocs` reads from this value (`RuleInfo.troubleshooting`)."""
        return self.fix


CAPABILITIES = CheckInfo(
    "TC001",
    E,
    "§7.2, contract §3.4",
    "Adapter declares valid AdapterCapabilities and its identity",
    slug="capabilities_declared",
    fix="check that `capabilities` is an AdapterCapabilities with every field of contract §3.4 (or canonical §7.2), limits positive, and that `name`, `provider` and `wire_api` name a registered wire record.",
)

EXERCISED = CheckInfo(
    "TC002",
    E,
    "§7.2, contract §3.4",
    "Every capability declared true is exercised by at least one case",
    slug="declared_capabilities_exercised",
    fix="add a cassette that exercises the capability the skip names (`turnspec wire record`), or declare it false if the adapter cannot carry it.",
)

RESPONSE_VALID = CheckInfo(
    "TC101",
    E,
    "§5, §7.1",
    "Parsed responses validate (schemas and TS rules)",
    slug="responses_validate",
    fix="check that `from_wire_response` builds canonical messages: ULID ids, `tu_<ULID>` tool ids, a `created_at` in UTC and `schema_version: 1`; `turnspec validate` on a dumped message names the field.",
)
REQUEST_VALID = CheckInfo(
    "TC102",
    E,
    "§5, §7.1",
    "Messages read back from a wire request validate",
    slug="requests_read_back_validate",
    fix="check that `from_wire_request` reads every message of the recorded request into valid canonical messages (roles, block shapes, tool pairing).",
)
WIRE_SHAPE = CheckInfo(
    "TC104",
    E,
    "contract §4.2, §4.3",
    "Rendered requests have the provider's documented shape",
    slug="wire_request_shape",
    fix="check that `to_wire` writes the body the provider documents: the reason names the JSON pointer schemas/wire/<api>/ rejects.",
)
REQUEST_OPTIONS = CheckInfo(
    "TC105",
    E,
    "contract §3.3, §4.2, §4.3",
    "max_output_tokens, stop_sequences and temperature reach the API's request fields",
    slug="request_options_on_wire",
    fix="check that `to_wire` copies `max_output_tokens`, `stop_sequences` and `temperature` from the request options into the API's own fields (e.g. `max_tokens`, `stop`, `generationConfig`).",
)
EVENTS_VALID = CheckInfo(
    "TC103",
    E,
    "§7.4, streaming §5.3",
    "Stream events validate against stream-event.json",
    slug="stream_events_validate",
    needs="supports_streaming",
    exercises=("supports_streaming",),
    fix="check that `stream_response` yields only the event types and payloads of stream-event.json (canonical §7.4) or the streaming §5.3 names.",
)

LOSSY_WARN = CheckInfo(
    "TC201",
    E,
    "§4.2.2, §7.3",
    "Dropped block logs a WARNING entry with the five fields §7.3 lists",
    slug="dropped_block_warns",
    fix="check that every block `to_wire` drops logs exactly one WARN line with session_id, message_id, block type, adapter name and reason (canonical §7.3), and that nothing else is logged for it.",
)
LOSSY_ABSENT = CheckInfo(
    "TC202",
    E,
    "§7.3, contract §4.4",
    "Dropped block is absent from the wire, never partial",
    slug="dropped_block_absent",
    fix="check that a dropped block leaves nothing on the wire: no partial field, empty part or placeholder.",
)
LOSSY_CRITICAL = CheckInfo(
    "TC203",
    E,
    "§4.2.2",
    "Unrepresentable critical block fails with CriticalBlockError",
    slug="critical_block_fails",
    fix="check that a block marked critical (metadata `critical`, or the configured key) which the provider cannot carry raises `CriticalBlockError` instead of being dropped.",
)

TOOL_ID_CANONICAL = CheckInfo(
    "TC301",
    E,
    "§6.2, §5.2.1",
    "Parsed provider tool ids become canonical tu_<ULID>",
    slug="parsed_tool_ids_canonical",
    needs="supports_tools",
    exercises=("supports_tools", "supports_parallel_tool_calls"),
    fix="check that `from_wire_response` maps each provider tool id through `tool_id_map` to a canonical `tu_<ULID>`, never keeping the provider's id.",
)
TOOL_ID_RESTORED = CheckInfo(
    "TC302",
    E,
    "§6.2",
    "Serializing back to the provider restores its tool id",
    slug="provider_tool_ids_restored",
    needs="supports_tools",
    exercises=("supports_tools",),
    fix="check that `to_wire` looks a canonical id up in the session's map and writes the provider's original id back.",
)
TOOL_ID_INJECTIVE = CheckInfo(
    "TC303",
    E,
    "§6.2",
    "Tool-id map is injective and stable across calls",
    slug="tool_id_map_injective",
    needs="supports_tools",
    exercises=("supports_tools",),
    fix="check that `tool_id_map` is one map per session: two provider ids never share a canonical id and a lookup repeated gives the same answer.",
)
TOOL_ID_RULES = CheckInfo(
    "TC304",
    E,
    "§6.2, contract §4.1.1",
    "Generated provider tool ids satisfy the provider's rules",
    slug="provider_tool_id_rules",
    needs="supports_tools",
    exercises=("supports_tools",),
    fix="check that provider ids the adapter mints follow the API's documented pattern and length (the wire record's `tool_id` rule).",
)
TOOL_ID_PAIRED = CheckInfo(
    "TC305",
    E,
    "§6.2, §5.2.2",
    "tool_use and its tool_result carry the same mapped id",
    slug="tool_use_and_result_paired",
    needs="supports_tools",
    exercises=("supports_tools",),
    fix="check that a tool_use and the tool_result answering it are written with the same provider id.",
)
TOOL_ID_DETERMINISTIC = CheckInfo(
    "TC306",
    W,
    "§6.2, contract §4.1.1",
    "Parsing the same bytes again gives the same canonical tool ids (advisory: minted ids may differ)",
    strict=True,
    slug="tool_ids_deterministic",
    needs="supports_tools",
    fix="check whether parsing the same bytes twice with fresh maps gives the same tool ids; minted ids may differ, which is why it is advisory and only `--strict` fails it.",
)

REPLAY_PRESERVED = CheckInfo(
    "TC401",
    E,
    "§8.3, §2.1.2",
    "Cross-provider replay preserves text and tool calls",
    slug="replay_preserves_content",
    fix="check that replaying another adapter's history keeps every text and tool call, in order.",
)
REPLAY_PAIRED = CheckInfo(
    "TC402",
    E,
    "§8.3, §5.2.2",
    "Cross-provider replay pairs every tool_result with its call",
    slug="replay_pairs_results",
    fix="check that in a replayed history every tool_result still follows its tool_use, with the ids the target API accepts.",
)
REPLAY_SYSTEM = CheckInfo(
    "TC403",
    E,
    "§3.3, contract §4.1.2",
    "System prompt hoisted or placed as the target provider needs",
    slug="replay_system_placement",
    exercises=("supports_system_prompt", "supports_system_messages_in_list"),
    fix="check that system messages become what the target API takes: a top-level `system`, a `developer`/`system` message or `systemInstruction`.",
)
REPLAY_DROPPED = CheckInfo(
    "TC404",
    E,
    "§7.3, §8.3",
    "Blocks the target cannot carry are dropped with WARN",
    slug="replay_drops_with_warn",
    fix="check that blocks the target cannot carry (another provider's thinking, images where unsupported) are dropped with the WARN line, not sent.",
)
REPLAY_SIGNATURE = CheckInfo(
    "TC405",
    E,
    "§6.5, §7.3",
    "Thinking signatures go back only to the provider that issued them",
    slug="thinking_signatures",
    exercises=("supports_thinking",),
    fix="check that thinking and its signature go back only to the adapter that issued them (`provider_raw` or the block's provider) and, where the API's docs require it, do go back.",
)

CAPS_CARRIED = CheckInfo(
    "TC501",
    E,
    "§7.2, contract §3.4",
    "Declared-true capabilities reach the wire",
    slug="declared_capabilities_carried",
    exercises=(
        "supports_thinking",
        "supports_images",
        "supports_tools",
        "supports_system_prompt",
        "supports_structured_output",
        "supports_streaming",
    ),
    fix="check that every capability declared true reaches the wire (tools, images, thinking, system messages, streaming).",
)
CAPS_DROPPED = CheckInfo(
    "TC502",
    E,
    "§7.2, §7.3, contract §4.4",
    "Declared-false capabilities are dropped with WARN or fail cleanly",
    slug="undeclared_capabilities_dropped",
    fix="check that a capability declared false is dropped with the WARN line or refused with an `AdapterError`, never a crash.",
)

STREAM_ORDER = CheckInfo(
    "TC601",
    E,
    "contract §5.2.1, §5.2.4, §6.5",
    "Stream ends with one message_complete (stop_reason error before a raise); a start event comes first",
    slug="stream_order",
    needs="supports_streaming",
    exercises=("supports_streaming",),
    fix="check that a stream ends with exactly one `message_complete` (stop_reason `error` before raising) and, with the dotted names, starts with `message.start`.",
)
STREAM_INDEX = CheckInfo(
    "TC602",
    E,
    "contract §5.2.5",
    "content_block_index never decreases",
    slug="stream_index_monotonic",
    needs="supports_streaming",
    exercises=("supports_streaming",),
    fix="check that `content_block_index` never goes down as the provider's content blocks arrive.",
)
STREAM_TOOL = CheckInfo(
    "TC603",
    E,
    "contract §5.2.2",
    "Each tool_use has one start, its deltas, one end",
    slug="stream_tool_events",
    needs="supports_streaming_tool_calls",
    exercises=("supports_streaming_tool_calls",),
    fix="check that each streamed tool_use has one start, its input deltas and one end, in that order.",
)
STREAM_FINAL_INPUT = CheckInfo(
    "TC604",
    E,
    "contract §5.2.3, §5.4",
    "tool_use_end.final_input is the JSON object the deltas spell",
    slug="stream_final_input",
    needs="supports_streaming_tool_calls",
    exercises=("supports_streaming_tool_calls",),
    fix="check that `tool_use_end.final_input` is the object the concatenated `partial_json` deltas parse to.",
)
STREAM_AGGREGATE = CheckInfo(
    "TC605",
    E,
    "streaming §5.3, §5.4",
    "Deltas add up to message_complete.final_content",
    slug="stream_aggregate",
    needs="supports_streaming",
    exercises=("supports_streaming",),
    fix="check that the text, thinking and tool deltas add up to `message_complete.final_content`.",
)
STREAM_EQUALS_PARSE = CheckInfo(
    "TC606",
    E,
    "contract §10.1.14, streaming §5.1",
    "Stream aggregate equals the non-streaming parse",
    slug="stream_equals_parse",
    needs="supports_streaming",
    exercises=("supports_streaming",),
    fix="check that aggregating the stream gives the message `from_wire_response` gives for the same turn.",
)
STREAM_CHUNKING = CheckInfo(
    "TC607",
    E,
    "contract §5.1",
    "Splitting the byte stream differently yields the same events",
    slug="stream_chunking",
    needs="supports_streaming",
    exercises=("supports_streaming",),
    fix="check that the stream parser keeps state across chunk boundaries: feeding the same bytes split elsewhere must yield the same events.",
)
STREAM_VOCABULARY = CheckInfo(
    "TC608",
    E,
    "§7.4, streaming §5.3",
    "Stream events follow one naming, canonical §7.4 or streaming §5.3, never a mix",
    slug="stream_one_vocabulary",
    needs="supports_streaming",
    fix="check that one stream uses one spelling of event names: canonical §7.4 (`text_delta`) or streaming §5.3 (`text.delta`), never both.",
)
STREAM_LITERAL_JSON = CheckInfo(
    "TC609",
    E,
    "contract §5.4, §10.1.7",
    "tool_use_input_delta.partial_json are the provider's literal fragments",
    slug="stream_partial_json_literal",
    needs="supports_streaming_tool_calls",
    fix="check that `tool_use_input_delta.partial_json` carries the provider's fragments as sent, not re-serialized JSON.",
)
STREAM_SIGNATURE_LAST = CheckInfo(
    "TC610",
    E,
    "streaming §5.3",
    "A thinking signature rides only on the block's final thinking_delta",
    slug="stream_signature_on_final_delta",
    needs="supports_thinking",
    fix="check that a thinking block's signature is emitted only on its final `thinking_delta`.",
)
STREAM_CANCEL = CheckInfo(
    "TC611",
    E,
    "contract §5.3, §10.1.12, streaming §6.2.1",
    "cancel(request_id) closes open tool calls ({} if unparsable) and ends with message_complete(cancelled)",
    slug="stream_cancel",
    needs="supports_streaming",
    fix="check that `cancel(request_id)` closes open tool calls (`{}` when their JSON does not parse) and ends the stream with `message_complete` (stop_reason `cancelled`) whose `final_content` keeps what was read before the cancel, redacted thinking (which no event carries) included.",
)

ESTIMATE = CheckInfo(
    "TC701",
    E,
    "contract §3.1",
    "estimate_input_tokens within the stated tolerance of recorded usage",
    slug="token_estimate",
    fix="check `estimate_input_tokens` against the recorded usage: the reason gives the median and p95 error; tune the per-message overheads or the characters-per-token ratio.",
)

CASSETTE_API = CheckInfo(
    "TC800",
    E,
    "§11.2",
    "Recorded interaction is readable, valid under its API's wire schemas, and of an API some adapter serves (else skipped)",
    fix="a failing case is the recording's, never the adapter's: fix or re-record the cassette at the file, interaction and JSON pointer named (a damaged body, a stream that breaks its framing, a field off the API's wire schema); a skipped one records an API no registered adapter serves: remove it, or register an adapter or wire record for that API.",
)
ERROR_CLASSIFIED = CheckInfo(
    "TC801",
    E,
    "contract §6.1-§6.3, §6.5.3",
    "Error responses and errors reported mid-stream raise a classified AdapterError",
    slug="errors_classified",
    fix="check that error responses raise the AdapterError subclass of contract §6.2-§6.3 for their status and body hint, with `retryable`, the status, the request id and the retry hint set; `turnspec wire show API` prints the API's error tables.",
)
REQUEST_ROUND_TRIP = CheckInfo(
    "TC802",
    E,
    "§2.1.1, §11.1.1",
    "Recorded request read and rendered back matches semantically",
    slug="request_round_trip",
    fix="check that `from_wire_request` then `to_wire` gives back the recorded request (compared semantically): fields dropped or renamed on the way are named in the reason.",
)

IMAGES_KEPT = CheckInfo(
    "TC901",
    E,
    "§4.2, §8.3",
    "Image source kind, media type and bytes survive the wire and read-back",
    slug="images_kept",
    needs="supports_images",
    exercises=("supports_images",),
    fix="check that an image's source kind, media type and bytes survive `to_wire` and the read-back.",
)
TOOL_ERROR_KEPT = CheckInfo(
    "TC902",
    E,
    "§4.2, §7.3, §8.3",
    "tool_result is_error reaches the wire's error flag and read-back, else a WARN",
    slug="tool_errors_kept",
    needs="supports_tools",
    exercises=("supports_tools",),
    fix="check that `is_error` on a tool_result reaches the wire's error flag and comes back, or is dropped with the WARN line where the API has none.",
)
STOP_REASON = CheckInfo(
    "TC903",
    E,
    "§4.3, contract §3.3",
    "How a turn ended follows the recording: streamed stop_reason and a parsed message's status (record's "
    "mapping), and a recorded refusal read as the reply's text",
    slug="stop_reason_recorded",
    exercises=("supports_streaming",),
    fix="check the stop reason mapping of the wire record: each provider finish reason to the canonical `stop_reason` and status, and a refusal read as the reply's text; `turnspec wire show API` prints the record's table.",
)
USAGE_RECORDED = CheckInfo(
    "TC904",
    E,
    "contract §7.2",
    "Parsed usage (input, output, cache read/write) equals the recorded body",
    slug="usage_recorded",
    exercises=("supports_prompt_caching",),
    fix="check the usage mapping of contract §7.2: input, output, cache read and cache write counts from the body, with cached tokens not counted twice; `turnspec wire show API` says whether the API counts cache reads in its input.",
)
CAPS_PROBED = CheckInfo(
    "TC503",
    E,
    "§7.2, contract §3.4, §4.4",
    "Parallel and streamed tool calls, prompt caching and token limits hold when probed",
    slug="capabilities_probed",
    exercises=("supports_streaming_tool_calls", "supports_parallel_tool_calls", "supports_prompt_caching"),
    fix="check the probed capabilities: parallel tool calls render and read back as one turn, streamed tool calls emit input deltas, cache counts parse, and the token limits are consistent.",
)
PROVIDER_RAW_ISOLATED = CheckInfo(
    "TC406",
    E,
    "§6.5, §9.1",
    "Another adapter's provider_raw changes nothing in the request; the adapter's own survives storage",
    slug="provider_raw_isolated",
    fix="check that `to_wire` ignores `provider_raw` entries of other adapters and that its own entry is JSON data that renders the same request after a round trip.",
)
SERVED_MODEL = CheckInfo(
    "TC907",
    E,
    "contract §3.3",
    "The parsed model is the one the response names as having served the call",
    slug="served_model",
    fix="check that the parsed message's model is the one the response says served the call, not the one requested.",
)
REPLY_TEXT = CheckInfo(
    "TC908",
    E,
    "contract §3.3",
    "A parsed or streamed reply's text is the text the recording carries, in order",
    slug="reply_text",
    fix="check the reading of the reply's text blocks, and of its thinking blocks where the recording carries thinking text (a response's and a stream's: they share it): the reason quotes the recorded text the parsed texts lack.",
)
REPLY_TOOL_CALLS = CheckInfo(
    "TC909",
    E,
    "contract §3.3",
    "A parsed or streamed reply's tool calls are the ones the recording carries: names and inputs, in order",
    slug="reply_tool_calls",
    fix="check the reading of the reply's tool calls (their names, and inputs read whole): the reason names the call and what the recording has.",
)
USAGE_ESTIMATED = CheckInfo(
    "TC906",
    E,
    "contract §7.2",
    "Usage a response lacks is reported as none, or estimated with a WARN line noting it",
    slug="missing_usage_estimated_with_warn",
    fix="check that a response without usage is reported with none, or with an estimate and the WARN line saying so.",
)
STREAM_USAGE_REQUESTED = CheckInfo(
    "TC905",
    E,
    "contract §7.2",
    "Streaming requests ask for usage where the API's record says usage must be requested",
    slug="stream_requests_usage",
    needs="supports_streaming",
    fix="check that streaming requests ask for usage where the API needs it (Chat Completions: `stream_options.include_usage`).",
)
MESSAGE_ID_FROM_CORE = CheckInfo(
    "TC108",
    E,
    "§6.1",
    "A parsed message's id is the one the core passed (RequestContext.message_id)",
    slug="message_id_from_core",
    fix="check that the parsed message's `id` is `RequestContext.message_id` when the core passes one (canonical §6.1: ids are the core's), not an id the adapter mints or the provider's.",
)
ENDPOINT = CheckInfo(
    "TC109",
    E,
    "contract §4.2, §4.3",
    "Rendered requests use the method, path, model id, stream choice and headers the API's record documents",
    slug="documented_endpoint",
    fix="check the method, path and headers of `to_wire`'s request against the endpoint the API's record documents: the streaming endpoint for a stream, the model id whole (never cut at a `:`) and spelled as the docs say (a URL segment percent-encoded), the version header; `turnspec wire show API` prints the record's endpoint.",
)
CACHE_CONTROL_HIDDEN = CheckInfo(
    "TC110",
    E,
    "contract §4.2",
    "cache_control markers never reach the canonical messages read back",
    slug="cache_control_hidden",
    fix="check that `from_wire_request` keeps provider-only markers such as `cache_control` out of the canonical blocks it reads back (provider_raw may hold them).",
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
        REPLY_TEXT,
        REPLY_TOOL_CALLS,
        MESSAGE_ID_FROM_CORE,
        ENDPOINT,
        CACHE_CONTROL_HIDDEN,
    ]
)

# The base test class (`suite.testing`) makes one standard test per rule of the catalogue
# (TC800 judges cassettes, not an adapter): `test_<id>_<slug>`, skipped when the adapter
# declares false the capability the rule needs. Both live here, beside the rules.
TEST_SLUGS: dict[str, str] = {c.id: c.slug for c in CATALOG if isinstance(c, CheckInfo) and c.slug}
NEEDS: dict[str, str] = {c.id: c.needs for c in CATALOG if isinstance(c, CheckInfo) and c.needs}
"""Rule -> the capability it needs (the rule's cases exercise that capability)."""
SUITE_ONLY = tuple(c.id for c in CATALOG if isinstance(c, CheckInfo) and not c.slug)
"""Rules about the recordings, not an adapter: no standard test."""
BOOLEAN_CAPABILITIES = tuple(f for f in CAPABILITY_FIELDS if f.startswith("supports_"))
"""The boolean fields of schemas/canonical/v1/adapter-capabilities.json (a test proves the
two agree); TC002 asks each one declared true to be exercised."""
EXERCISERS: dict[str, tuple[str, ...]] = {
    cap: tuple(c.id for c in CATALOG if isinstance(c, CheckInfo) and cap in c.exercises) for cap in BOOLEAN_CAPABILITIES
}
"""The rules whose cases exercise a capability. TC002 judges a capability only when all of
them ran (a --select that leaves one out cannot tell), and names them when none had a case."""

# TC701: an offline heuristic cannot meet the contract's ±10% (that assumes a real
# tokenizer); the suite holds estimates to this band, calibrated on recorded usage.
ESTIMATE_REL_TOLERANCE = 0.35
ESTIMATE_ABS_TOLERANCE = 60


TROUBLESHOOTING: dict[str, str] = {c.id: c.fix for c in CATALOG if isinstance(c, CheckInfo) and c.fix}
"""What to look at when a check fails (the `turnspec rule TCxxx` "fix" line, SARIF help, the
docs), by id; derived: `core.ruledocs` reads each check's own `CheckInfo.fix`."""
