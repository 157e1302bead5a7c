"""How to fix a finding of each rule, in the terms of the data it is about: what to change
in your file (or store, cassette, schema), not what the rule's test fixture did.

One line per rule id, read by `ruledocs.fix_text` (`turnspec rule ID`, SARIF `help`, the
docs site). A suite check's line is its `CheckInfo.fix` (`suite/rules.py`), not here.
`tests/test_rule_help.py` fails when a rule turnspec reports has no line here.
"""

from __future__ import annotations

FIXES: dict[str, str] = {
    # -- reading the input (core.jsonio, cli, reporting) --------------------------------------
    "TS000": "check that the path exists and is a regular file or a folder you may read (a FIFO, device or "
    "socket is never opened); fix the path, the permissions or the link.",
    "TS001": "make the line (or document) valid JSON at the column named: a missing quote, comma or bracket, or "
    "a trailing comma; one JSON value per line in a .jsonl file.",
    "TS002": "re-encode the file as UTF-8 (`iconv -f LATIN1 -t UTF-8`, or fix the writer's encoding); the byte "
    "at the column named is not UTF-8.",
    "TS003": "remove the byte order mark from the start of the file (RFC 8259 forbids it in JSON text "
    "exchanged between systems); most editors save 'UTF-8 without BOM'.",
    "TS004": "write LF line endings (`dos2unix FILE`, or open the file in binary mode when writing it).",
    "TS005": "remove the blank line: every line of a JSON Lines file holds one JSON value.",
    "TS006": "keep one member per key in the object named: readers disagree on which duplicate wins.",
    "TS007": "write NaN and Infinity as null or a string: JSON has no such numbers (Python's json.dumps "
    "writes them unless given allow_nan=False).",
    "TS008": "keep the value shallower or the line shorter than the limits the message names (a runaway "
    "nesting or an embedded blob usually); move large payloads out of the transcript.",
    "TS009": "finish the value the file ends inside (a write that was cut short): restore the end of the "
    "file, or drop the incomplete last line.",
    "TS013": "give the file's format with --format, or leave it out of the paths; --show-skipped lists the "
    "files skipped.",
    # -- canonical messages: schema (formats/canonical) ---------------------------------------
    "TS010": "remove or rename the field named, or keep it as an additive field (a warning; --strict makes "
    "it an error); per-provider data belongs in metadata.provider_raw.<provider>.",
    "TS011": "write the block as one of the known types (text, image, tool_use, tool_result, thinking, "
    "redacted_thinking), or keep it as an additive type (a warning, an error with --strict).",
    "TS012": "write schema_version 1 (the version this turnspec reads), or migrate the record with `turnspec migrate`.",
    "TS020": "make the value at the pointer what the schema says (the message names the field and what was "
    "expected): a missing required field, a wrong type, or a value outside its enumeration.",
    # -- canonical messages: one message ------------------------------------------------------
    "TS101": "give the message at least one content block; a user, assistant or tool message cannot be empty.",
    "TS102": "move the block to a message of a role that may hold it (tool_use in assistant messages, "
    "tool_result in tool messages, thinking in assistant messages).",
    "TS103": "put exactly one tool_result block in each tool message; split several results into several "
    "tool messages.",
    "TS104": "set metadata.model (`provider:model`) and metadata.provider on every complete assistant "
    "message: the model and the provider that produced it.",
    "TS105": "record metadata.routing (mode, chosen_model, reason) on every complete assistant message.",
    "TS106": "record metadata.usage (input_tokens, output_tokens, ...) on every complete assistant message; a "
    "reply the provider sent without usage needs an estimate, or status other than complete.",
    "TS107": "make metadata.routing.chosen_model the model in metadata.model (the model that answered).",
    "TS108": "write model ids as `provider:model` (`anthropic:claude-sonnet-4-6`), not the bare model name.",
    "TS109": "make metadata.provider the provider part of metadata.model (`anthropic` for `anthropic:...`).",
    "TS110": "set metadata.parent_tool_use_id on each tool message to the tool_use id its tool_result answers.",
    "TS111": "make metadata.parent_tool_use_id equal the tool_result block's tool_use_id.",
    "TS112": "mint tool ids as `tu_` plus a ULID (`tu_01JZ...`) and keep the provider's own id in "
    "metadata.provider_raw; both the tool_use id and every reference to it change together.",
    "TS113": "write an image/* media_type (image/png, image/jpeg, ...) that matches the bytes.",
    "TS114": "make file_ref paths relative to the workspace and free of `..` (no absolute path, no escape).",
    "TS115": "write created_at as a real UTC date and time (`2026-05-08T12:00:00.000000Z`): month, day and "
    "hour in range.",
    "TS116": "store the image (or audio) data as standard base64 (no line breaks, padded), or use a url or "
    "file_ref source.",
    "TS117": "write created_at with 6 fraction digits and `Z` (`2026-05-08T12:00:00.000000Z`), the canonical encoding.",
    "TS118": 'write cost_usd as a plain decimal string (`"0.000654"`), never a JSON number or exponent form.',
    "TS119": "set status to cancelled on a message whose stop_reason is cancelled.",
    "TS120": "give a url source an absolute URL with its scheme (`https://...`), or use base64 or file_ref.",
    "TS121": "store a pseudonymous id (a hash or an opaque id) in user_id and team_id, never an email address.",
    # -- canonical messages: a session --------------------------------------------------------
    "TS201": "mint message ids as ULIDs (26 Crockford base-32 characters, e.g. with python-ulid) and keep "
    "another system's id in metadata.provider_raw.",
    "TS202": "give each message its own id: a repeated id (the message names the first use) is a duplicated "
    "or merged record; drop the copy or mint a new ULID.",
    "TS203": "keep message ids increasing within a session (ULIDs minted in order); put the messages in the "
    "order they were written, or mint the ids monotonically.",
    "TS204": "check the clock that wrote created_at (only ids must increase; a backwards time is a warning).",
    "TS205": "answer only tool calls made earlier in the same session: give the tool_result the tool_use id "
    "it answers, or restore the assistant message with that call.",
    "TS206": "keep one tool_result per tool_use: remove the second answer, or give it the id of the call it "
    "really answers.",
    "TS207": "give every tool_use its own id (`tu_<ULID>`); a reused id makes its results ambiguous.",
    "TS208": "add the tool message answering the call (a tool_result with its id), or accept the warning for a "
    "session that really ended mid-call.",
    "TS209": "start a new turn with a user message after a cancelled assistant message: a cancelled turn is not "
    "resumed by another assistant message.",
    # -- canonical: tools ----------------------------------------------------------------------
    "TS301": "name tools in snake_case (`run_tests`, not `runTests`).",
    "TS302": "define each tool name once: merge or rename the duplicate definitions.",
    "TS303": "rewrite the input_schema with the allowed subset of §5.4 (no $ref, oneOf, anyOf, allOf, not, "
    "if/then/else, patternProperties or a schema in additionalProperties): a nullable string is `type: "
    '["string", "null"]`.',
    "TS304": "define the tool the call names in the --tools file, or fix the name of the call.",
    "TS305": "make the call's input match the tool's input_schema (the message names the member and what the "
    "schema expects).",
    "TS306": "write the tool name without a provider prefix, in snake_case (`read_file`, not `functions.read_file`).",
    # -- canonical: costs ------------------------------------------------------------------------
    "TS401": "recompute cost_usd from the price table with exact decimal arithmetic (the message gives the "
    "expected value), or fix the token counts it was computed from.",
    "TS402": "record a pricing_version the price table holds, or add that version to the --pricing table.",
    "TS403": "add the model's prices to that pricing_version of the table, or fix metadata.model.",
    "TS404": "add the cached-token rates (cached input, cache writes) for the model to the price table, so "
    "cost_usd can be checked.",
    # -- SQLite store (formats/sqlite) ------------------------------------------------------------
    "TS501": "create the table, column or index the message names with the §9.1 DDL (`turnspec convert --to "
    "sqlite` writes a store that has them).",
    "TS502": "store content_json as a JSON array of blocks and metadata_json as a JSON object.",
    "TS503": "make the column hold the message's own value of the type §9.1 gives it (the message names both).",
    "TS504": "insert the tool_calls row of each tool_use (id, session, message, name, status).",
    "TS505": "make the tool_calls row's session, message and name those of its tool_use block.",
    "TS506": "set tool_calls.result_message_id to the id of the tool message that answers the call.",
    "TS507": "set tool_calls.status from the messages: answered, pending, or cancelled for a cancelled turn.",
    "TS508": "delete the tool_calls row, or restore the tool_use block it records.",
    "TS509": "make the foreign key name an existing row (restore it, or delete the dangling row).",
    "TS510": "check the file is a SQLite database turnspec may read (not truncated, not locked, not another "
    "format with a .db name).",
    # -- conversions (core.convertkit) ----------------------------------------------------------------
    "TS900": "nothing to fix in the source: the target format cannot hold what the message names; keep the "
    "source, or accept the loss (the canonical copy keeps ids in metadata.provider_raw).",
    "AS900": "nothing to fix in the source: the target format cannot hold what the message names; keep the "
    "source as the record of it (ids, metadata and parts canonical has no block for ride in provider_raw).",
    "AS901": "accept the value the conversion wrote (UIMessages carry no session id, times or model), or keep "
    "them beside the messages and set them in the canonical file.",
    "GE900": "nothing to fix in the source: geppetto's Turn cannot hold what the message names; keep the "
    "canonical file as the record of it.",
    "GE901": "give the source the value the message names (a session id, an id, a time), or accept the "
    "default the conversion wrote.",
    "LC900": "nothing to fix in the source: the target format cannot hold what the message names; keep the "
    "source as the record of it.",
    "LC901": "add the value the message names to the LangChain messages (in additional_kwargs or "
    "response_metadata), or accept the one the conversion wrote.",
    "OM900": "nothing to fix in the source: Chat messages cannot hold what the message names; keep the "
    "canonical file as the record of it.",
    "OM901": "give the conversion the value the message names (a session id, ids, times), or accept the one "
    "it wrote: Chat messages carry none.",
    "OT900": "nothing to fix in the source: the GenAI attributes cannot hold what the message names; keep the "
    "canonical file as the record of it.",
    "OT901": "record the value the message names beside the messages (gen_ai.conversation.id, the span's "
    "time), or accept the one the conversion wrote.",
    "PA900": "nothing to fix in the source: the pydantic-ai history cannot hold what the message names; keep "
    "the canonical file as the record of it.",
    "PA901": "give the history the value the message names (timestamps, ids), or accept the one the conversion wrote.",
    # -- migrations (migrations) --------------------------------------------------------------------
    "TM001": "migrate to a revision turnspec has a path to from the record's schema_version (`turnspec "
    "migrate --help` lists them), or fix the record's version.",
    "TM002": "remove or rewrite the content the message names before migrating: the target revision cannot "
    "represent it.",
    "TM003": "report it with the record: a migration wrote a document its target revision rejects (the "
    "message names the schema error).",
    # -- schema diff (schema.diff_rules) ------------------------------------------------------------
    "SD001": "make the change additive (new optional fields, wider types), or publish it as a new revision "
    "with a migration for stored data.",
    "SD002": "check that every reader of the new data is upgraded first, or keep the change additive for old readers.",
    "SD003": "migrate stored data before new readers read it (the message names data the new schema "
    "rejects), or loosen the change.",
    # -- replay-check (replay.rules) ----------------------------------------------------------------
    "RC001": "replay to a target that accepts images, or drop or describe the images before the swap.",
    "RC002": "convert the images to a media type the target accepts (its accepted_image_media_types).",
    "RC003": "replay to a target that supports tools, or summarize the tool turns before the swap.",
    "RC004": "replay to a target that takes a system prompt, or fold the prompt into the first user message.",
    "RC005": "compact or truncate the history below the target's max_context_tokens, or choose a target with "
    "a larger window.",
    "RC006": "replay to a target that can carry the critical block, or unmark it (metadata.critical) if its "
    "loss is acceptable.",
    "RC007": "report it to the adapter's author with the session: rendering the stored history raised (the "
    "message names the exception).",
    "RC101": "accept the loss the WARN line names, or replay to a target that keeps that block (--strict fails on it).",
    "RC102": "let the target adapter drop the foreign signature with its WARN line; as it is, opaque state is "
    "lost without a word.",
    "RC201": "let the adapter map tool ids to ones the target API accepts (its id rule, e.g. length and "
    "characters), instead of passing the stored ids through.",
    "RC202": "give the tool calls distinct ids, or let the adapter map each canonical id to its own provider id.",
    "RC301": "strip other providers' thinking signatures and redacted thinking before the swap (the target "
    "adapter should drop them with a WARN line).",
    "RC900": "fix the record the message names first (`turnspec validate` locates the problem).",
    # -- cassette lint (wire.cassette_lint) ----------------------------------------------------------
    "CL001": "remove the credential header from the cassette (`turnspec cassettes lint --fix --in-place`), and "
    "set vcrpy's filter_headers so the next recording drops it; rotate the key if it was real.",
    "CL002": "replace the API key with a placeholder (`--fix --in-place` does) and rotate the key.",
    "CL003": "replace the bearer token with a placeholder (`--fix --in-place` does) and revoke it.",
    "CL004": "replace the account, organization or project id with a placeholder (`--fix --in-place` does).",
    "CL005": "remove the cookie (`--fix --in-place` does) and filter Set-Cookie and Cookie when recording.",
    "CL006": "remove the signature from the URL's query (`--fix --in-place` does); signed URLs grant access "
    "until they expire.",
    "CL007": "scrub the body field the message names (`--fix --in-place` does), and filter it when recording "
    "(vcrpy before_record_request).",
    "CL008": "replace the value with a placeholder (`--fix --in-place` does) and rotate the credential if it was real.",
    "CL009": "make the cassette a readable vcrpy YAML file (the message names the YAML error).",
    # -- gpt2099 (formats/gpt2099) -------------------------------------------------------------------
    "GP001": "fix the NUON syntax at the line named (nushell's `to nuon` writes valid NUON).",
    "GP002": "export the value as JSON can hold it (a date as an ISO string, a duration or size as a number); "
    "nushell's `to json` shows what converts.",
    "GP010": "check the file is a gpt2099 thread, context window or normalized response; another file in the "
    "folder can be left out, or --format chosen.",
    "GP011": "rename meta.options to meta.inherited (gpt2099's planned name; both are read today).",
    "GP012": "keep only meta.inherited (options is its old name): merge the two objects.",
    "GP013": "write the block as a type gpt2099 documents (text, image, document, tool_use, tool_result), or "
    "accept the warning for a newer type.",
    "GP014": "nothing to fix: the file is another API's recorded traffic; leave it out of the paths.",
    "GP015": "write the streamer event's content as a string (tool arguments as their JSON text).",
    "GP016": "emit an event with a `type` (starting a block) before events that append content.",
    "GP020": "make the value at the pointer what gpt2099's schema says (the message names the field).",
    "GP101": "use gpt2099's turn ids (SCRU128: 25 base-36 characters), as `gpt` writes them.",
    "GP102": "give each turn its own id (ids compare case-insensitively); drop the duplicated frame.",
    "GP103": "store the document's data as valid base64.",
    "GP104": "choose a bookmark name that is not 25 base-36 characters, or it reads as a turn id.",
    "GP105": "give a document turn (meta.type: document) exactly one document block.",
    "GP106": "write content_type and media_type as type/subtype (`application/pdf`).",
    "GP201": "make `continues` name a turn id or a bookmark of the thread (the turn or bookmark it names is missing).",
    "GP202": "make `continues` point to an earlier turn.",
    "GP203": "break the cycle: each turn continues an earlier one.",
    "GP204": "use a bookmark name once in the history, or rename the bookmark of the unrelated thread.",
    "GP301": "answer only tool_use blocks of the turn's context: give the tool_result the id of an earlier call.",
    "GP302": "give the tool_result the name of the tool_use it answers.",
    "GP401": "set options.provider_ptr (e.g. `milli`) on the thread or the turn, as `gpt call` needs one to "
    "choose a provider.",
    # -- chibi (formats/chibi) -------------------------------------------------------------------------
    "CB020": "make the entry match chibi's entry schema (the message names the field): chibi skips or refuses "
    "entries that do not.",
    "CB021": "make manifest.json what chibi writes (version, partitions, active_partition, rotation_policy).",
    "CB022": "make the inbox entry what chibi writes (the message names the field).",
    "CB023": "make context_meta.json what chibi writes (the message names the field).",
    "CB024": "make the requests.jsonl record what chibi writes (a debug log: removing it is safe).",
    "CB025": "remove the .bloom file (chibi rebuilds it) or restore the one chibi wrote.",
    "CB026": "nothing to fix if another chibi version wrote it (chibi skips unknown entry types); check the "
    "type's spelling otherwise.",
    "CB027": "nothing to fix if another chibi version wrote it (serde ignores unknown fields); check the "
    "field's spelling otherwise.",
    "CB028": "omit flow_control when it is false, as chibi does (it reads the same as absent).",
    "CB030": "keep one vocabulary per transcript (v0.10: role, flow_control, control_transfer); let chibi "
    "migrate the older entries rather than mixing them.",
    "CB031": "validate with the --format of the vocabulary the transcript uses (chibi, chibi-v0.9, "
    "chibi-v0.10), or migrate it.",
    "CB101": "give the entry a UUID id, as chibi writes.",
    "CB102": "give each entry its own id: drop the duplicated entry.",
    "CB103": "write timestamp as integer Unix seconds (no fraction, no string).",
    "CB104": "write anchors from `system` with the content chibi writes for that anchor type.",
    "CB105": "give the compaction anchor its metadata.summary (the summary it replaces the history with).",
    "CB106": "write control_transfer entries with empty content and flow_control: true.",
    "CB107": "store tool arguments as a JSON string, as chibi writes them.",
    "CB108": "set from/to to the context the docs require for that entry type (the message names it).",
    "CB109": "write each flow-control message with its control_transfer, both in the same direction.",
    "CB110": "keep metadata.transcript_anchor_id only on context.jsonl's anchor entry.",
    "CB201": "add the result entry for the call (its tool_call_id), or accept the finding for a context that "
    "stopped mid-call.",
    "CB202": "give the result the tool_call_id of an earlier call, or restore that call.",
    "CB203": "keep one result per call: remove the duplicate result.",
    "CB204": "use a fresh tool_call_id for each call while an earlier one with that id is open.",
    "CB205": "answer a tool call with a tool result and a flow-control call with a flow-control result.",
    "CB206": "send the result `from` the tool its call went `to`.",
    "CB210": "remove the system_prompt_changed entry from context.jsonl (it belongs to the transcript only); "
    "or mark the context stale (.dirty) and let chibi rebuild it.",
    "CB211": "start context.jsonl with an anchor entry (context_created or a compaction).",
    "CB212": "rebuild context.jsonl from the transcript (mark the context stale with a `.dirty` file and chibi "
    "rebuilds it on next load): from the last anchor on, without system_prompt_changed entries.",
    "CB213": "nothing to fix: chibi rebuilds context.jsonl on next load; load the context once to clear it.",
    "CB214": "keep the only anchor at entry 0 of context.jsonl: rebuild it from the transcript.",
    "CB215": "record the current system_prompt.md in the transcript (chibi writes system_prompt_changed when "
    "it loads the new prompt), or restore the prompt the transcript last recorded.",
    "CB301": "restore the partition file the manifest lists, or remove its entry from the manifest.",
    "CB302": "set entry_count to the partition's number of entries (or restore the missing entries).",
    "CB303": "set start_ts/end_ts to the partition's first and last entry timestamps.",
    "CB304": "order the manifest's partitions by time, without overlaps (restore the files chibi rotated).",
    "CB305": "create the active partition, or name the existing one in active_partition.",
    "CB306": "list the active partition only as active_partition, not among the archived ones.",
    "CB307": "set token_count to chibi's estimate for the partition's bytes (bytes / bytes_per_token).",
    "CB308": "list the partition in the manifest, or move the stray file out of transcript/.",
    "CB309": "restore the bloom file, or remove bloom_file from the partition's entry (chibi rebuilds it).",
    "CB310": "make manifest paths relative to transcript/, without `..`.",
    "CB311": "write manifest version 1, the one chibi reads.",
    "CB312": "name partition and bloom files `<start_ts>-<end_ts>` after their time range, as chibi rotates them.",
    "CB313": "nothing to fix: chibi moves transcript.jsonl into transcript/ on next load; load the context "
    "once to migrate it.",
    "CB320": "rotate the active partition (chibi does at its next write), or raise the policy's threshold.",
    "CB330": "remove the bloom file so chibi rebuilds it: as it is, search would miss the partition's terms.",
    "CB331": "remove the bloom file so chibi rebuilds it from the partition's words.",
    # -- geppetto (formats/geppetto) -------------------------------------------------------------------
    "GE001": "fix the YAML at the line named (indentation with spaces, quoted scalars, valid aliases).",
    "GE002": "re-encode the file as UTF-8.",
    "GE003": "keep one entry per key in the mapping: geppetto's reader refuses the file.",
    "GE004": "make the document smaller or shallower, or remove the aliases that expand it.",
    "GE005": "write a Turn document in the file (blocks, and optionally id and metadata).",
    "GE006": "keep one YAML document per turn file (geppetto reads only the first); split the others out.",
    "GE007": "write values JSON can hold: no NaN or Infinity, string keys only.",
    "GE010": "remove or rename the field named (geppetto's serde ignores it), or accept the warning.",
    "GE011": "write the block kind as geppetto writes it (llm_text, tool_call, tool_use, ...); unknown kinds "
    "read as `other`.",
    "GE012": "write version: 1, or leave version out (geppetto reads no version).",
    "GE020": "make the value at the pointer what geppetto's Turn schema says (the message names the field).",
    "GE101": "give the block the role its kind implies (user for user text, assistant for llm_text, ...).",
    "GE102": "give system and user blocks their role (system or user).",
    "GE103": "use the payload keys geppetto defines for the block's kind (text, id, name, args, result, ...).",
    "GE104": "give each block of the turn its own id.",
    "GE105": "use one of the documented roles (user, assistant, system) on `other` blocks.",
    "GE201": "write metadata and data keys as `namespace.name@vN` (e.g. `geppetto.usage@v1`).",
    "GE202": "use a `geppetto.` key that store defines, or move your own key to your namespace.",
    "GE203": "project inference_result only onto blocks the model generated (llm_text, tool_call, reasoning).",
    "GE204": "read and write inference_result on the turn; drop the scalar mirror the message names.",
    "GE301": "answer only tool_call blocks earlier in the turn: give the tool_use the id of its call.",
    "GE302": "give every tool_call its own id.",
    "GE303": "keep one tool_use per tool_call: remove the second answer.",
    "GE304": "add the tool_use that answers the call, or accept the warning for a turn that stopped mid-call.",
    "GE305": "set finish_class to match the turn (tool_calls while calls are pending, else stop).",
    "GE306": "keep each turn file of a session a clone of the previous turn plus new blocks (the message names "
    "where it leaves the history); a fork belongs in another session.",
    # -- OpenAI Chat messages (formats/openai_messages) --------------------------------------------------
    "OM001": 'write each record as a message object, or as `{"messages": [...]}` with an array of them.',
    "OM002": "use a Chat role: developer, system, user, assistant, tool (function for the old API).",
    "OM003": "give the message its content (an assistant message may leave it null only when it has tool_calls).",
    "OM004": "use content parts the role accepts (text for system, developer and tool; text and refusal for "
    "assistant; text, image_url, input_audio, file for user).",
    "OM005": "give the part the field its type requires (text.text, image_url.url, input_audio.data and "
    "format), or make content a string or an array of parts.",
    "OM006": 'write function.arguments as a string holding a JSON object (`"{\\"path\\": \\"a\\"}"`), as '
    "the API sends it.",
    "OM007": 'give each tool call its id, `type: "function"` and function.name.',
    "OM008": "give the tool message the tool_call_id of the call it answers.",
    "OM101": "answer only calls made earlier in the conversation: fix the tool_call_id, or restore the "
    "assistant message with that call.",
    "OM102": "keep one tool message per call: remove the second answer.",
    "OM103": "give each tool call its own id within the conversation.",
    # -- pydantic-ai (formats/pydantic_ai) -----------------------------------------------------------------
    "PA001": "store the history as a JSON array of messages, each with a `parts` array (what "
    "ModelMessagesTypeAdapter.dump_json writes).",
    "PA002": "set each message's kind to request or response.",
    "PA003": "use a part_kind of the message's kind (request: system-prompt, user-prompt, tool-return, "
    "retry-prompt; response: text, thinking, tool-call, ...).",
    "PA004": "give the part the field its class requires, of the right type (the message names it).",
    "PA005": "write user content items as pydantic-ai does (a string, or an object with its kind and fields: "
    "image-url with url, binary with base64 data).",
    "PA006": "write tool call args as a JSON object, its JSON text, or null.",
    "PA101": "answer only tool calls earlier in the history: give the tool return the tool_call_id of its call.",
    # -- Vercel AI SDK UIMessages (formats/ai_sdk) -------------------------------------------------------------
    "AS001": "store the conversation as what saveChat writes: a non-empty JSON array of UIMessage objects, each "
    "with a parts array of objects (a .jsonl line holds one such array).",
    "AS002": "give each message a string id and a role of system, user or assistant.",
    "AS003": "give the system or user message at least one part (validateUIMessages refuses it without).",
    "AS004": "give the part its string type (text, reasoning, tool-<name>, dynamic-tool, file, source-url, ...).",
    "AS005": "write the part with a type the AI SDK documents, or accept the warning for a part of a newer SDK "
    "(validateUIMessages refuses it).",
    "AS006": "give the part the field its type requires, of the documented type (the message names it); drop "
    "optional fields set to null.",
    "AS007": "give the tool part a documented state and the fields of that state: input for input-available, "
    "output only with output-available, errorText only with output-error.",
    "AS010": "drop the field or move it into metadata (messages) or a data-<name> part: validateUIMessages "
    "drops fields its type does not have.",
    "AS101": "give each message of the conversation its own id (generate stable ids before storing).",
    "AS102": "give the tool result the toolCallId of a tool-call part earlier in the conversation, or accept the "
    "warning for a conversation that starts mid-call.",
    "AS201": "give each ModelMessage a role of system, user, assistant or tool.",
    "AS202": "write content as the role takes it: a string for system, a string or an array of parts for user and "
    "assistant, an array of tool-result parts for tool.",
    "AS203": "give each part a string type its role holds (user: text, image, file; assistant: text, file, "
    "reasoning, tool-call, tool-result; tool: tool-result, tool-approval-response).",
    "AS204": "write the part with a ModelMessage part type the AI SDK documents, or accept the warning "
    "(modelMessageSchema refuses it).",
    "AS205": "give the part the field its type requires, of the documented type (a tool result's output as "
    "{type: text|json|error-text|error-json|execution-denied|content, value}).",
    # -- LangChain (formats/langchain) -----------------------------------------------------------------------
    "LC001": "store the conversation as a JSON array of message dicts (what messages_to_dict or dumpd write).",
    "LC002": "use a LangChain message type (human, ai, system, tool, chat, function, or a Chunk class).",
    "LC003": "write content as a string, or an array of strings and content blocks each with a `type`.",
    "LC004": "give the content block the field its TypedDict requires (text for text, name and args for "
    "tool_call, a url, base64 or file id for an image).",
    "LC005": "write tool_calls as an array of {name: string, args: object, id: string or null}.",
    "LC006": "give the tool message a string tool_call_id, and status success or error when set.",
    "LC101": "answer only tool calls made earlier in the conversation: fix the tool_call_id, or restore the "
    "AI message with that call.",
    # -- OpenTelemetry GenAI (formats/otel_genai) -------------------------------------------------------------
    "OT001": "record gen_ai.input.messages, gen_ai.output.messages and gen_ai.system_instructions as arrays "
    "(or the JSON text of arrays).",
    "OT002": "give each message a string role.",
    "OT003": "give each message a parts array of objects with a string type.",
    "OT004": "give the part the field its definition requires (content for text, name for a tool call, "
    "response for a tool call response, ...).",
    "OT005": "give each output message a string finish_reason (stop, length, tool_call, ...).",
    "OT101": "give the tool call response the id of a tool call earlier in the record, or accept the warning "
    "for a record that starts mid-conversation.",
}
