"""The rule catalogue of the gpt2099 format.

IDs are stable: GP0xx input, shape and schema; GP1xx one turn or block; GP2xx the
`continues` graph; GP3xx tool pairing; GP4xx what a call needs. Sections cite gpt2099's
docs/reference/schemas.md (seed 000) by heading anchor, or the gpt2099 source file whose
behaviour the rule encodes. Input-level problems shared with JSON reading keep their TS0xx
ids (TS001-TS009), so `--ignore TS00` means the same for every format.
"""

from __future__ import annotations

import re

from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

E, W = Severity.ERROR, Severity.WARNING
DOC = "schemas.md"

NUON_SYNTAX = RuleInfo("GP001", E, "nushell.sh/book NUON", "Input is not valid NUON")
NUON_UNSUPPORTED = RuleInfo(
    "GP002",
    E,
    "nushell.sh/book NUON",
    "NUON value JSON cannot hold (date, duration, size, binary, range)",
)
NOT_GPT2099 = RuleInfo("GP010", E, DOC, "Not a gpt2099 turn, context window or normalized response")
OPTIONS_OLD_NAME = RuleInfo(
    "GP011",
    W,
    f"{DOC}#conversation-turn-schema-gptturn",
    "Turn meta uses `options`, planned to be renamed `inherited`",
)
OPTIONS_BOTH = RuleInfo(
    "GP012",
    E,
    f"{DOC}#conversation-turn-schema-gptturn",
    "Turn meta has both `options` and `inherited`",
)
UNKNOWN_BLOCK = RuleInfo(
    "GP013",
    W,
    f"{DOC}#content-block-types",
    "Content block of an undocumented type (tolerated; error under --strict)",
    strict=True,
)
NOT_A_CONVERSATION = RuleInfo(
    "GP014",
    W,
    "provider-api.md (call); gpt2099 tests/fixtures",
    "File is a recording of a provider's own stream events (another API's wire traffic), which holds "
    "no conversation; not checked",
)
API = "provider-api.md"
STREAMER_CONTENT = RuleInfo(
    "GP015",
    W,
    f"{API}#response_stream_streamer",
    "Streamer event content is not a string (the doc: `content?: string`; tolerated, as gpt2099's Gemini "
    "streamer writes tool arguments as a record)",
)
STREAMER_NO_BLOCK = RuleInfo(
    "GP016",
    W,
    f"{API}#response_stream_streamer",
    "Streamer event without `type` appends content to the current block, but no block has started",
)
SCHEMA = RuleInfo("GP020", E, DOC, "Document does not match its gpt2099 JSON Schema")

TURN_ID = RuleInfo("GP101", E, f"{DOC}#turn-ids", "Turn id is not a SCRU128 (25 base-36 characters)")
TURN_ID_UNIQUE = RuleInfo(
    "GP102", E, f"{DOC}#turn-ids", "Turn id appears more than once (ids compare case-insensitively)"
)
DOCUMENT_BASE64 = RuleInfo("GP103", E, f"{DOC}#document-block", "Document block data is not valid base64")
HEAD_LOOKS_LIKE_ID = RuleInfo(
    "GP104",
    E,
    f"{DOC}#headish",
    "Bookmark (head) looks like a SCRU128 id, so it can never resolve as a bookmark",
)

CONTINUES_UNRESOLVED = RuleInfo(
    "GP201",
    E,
    f"{DOC}#headish",
    "continues target is neither a turn id nor a bookmark in the thread",
)
CONTINUES_NOT_EARLIER = RuleInfo("GP202", E, f"{DOC}#headish", "continues target resolves to this turn or a later one")
CONTINUES_CYCLE = RuleInfo("GP203", E, f"{DOC}#headish", "continues links form a cycle")
BOOKMARK_REUSED = RuleInfo(
    "GP204",
    W,
    f"{DOC}#bookmarks",
    "Bookmark (head) also names turns of an unrelated thread; bookmarks are unique in the history",
)

RESULT_UNPAIRED = RuleInfo(
    "GP301",
    E,
    f"{DOC}#tool-result-block",
    "tool_result pairs with no earlier tool_use in its context",
)
RESULT_NAME = RuleInfo("GP302", E, f"{DOC}#tool-result-block", "tool_result name differs from its tool_use's name")

DOCUMENT_TURN = RuleInfo(
    "GP105",
    E,
    f"{DOC}#document-specific-fields",
    "Document turn (meta.type: document) holds other than one document block",
)
MIME_SYNTAX = RuleInfo(
    "GP106",
    E,
    f"{DOC}#document-specific-fields; RFC 6838 §4.2",
    "content_type or media_type is not a MIME type (type/subtype)",
)
NO_PROVIDER_PTR = RuleInfo(
    "GP401",
    W,
    f"{DOC}#normalized-context-window-input-schema",
    "Resolved options lack provider_ptr, which a call requires",
)

CATALOG = RuleCatalog(
    [
        *IO_RULES,
        NUON_SYNTAX,
        NUON_UNSUPPORTED,
        NOT_GPT2099,
        OPTIONS_OLD_NAME,
        OPTIONS_BOTH,
        UNKNOWN_BLOCK,
        NOT_A_CONVERSATION,
        STREAMER_CONTENT,
        STREAMER_NO_BLOCK,
        SCHEMA,
        TURN_ID,
        TURN_ID_UNIQUE,
        DOCUMENT_BASE64,
        DOCUMENT_TURN,
        MIME_SYNTAX,
        HEAD_LOOKS_LIKE_ID,
        CONTINUES_UNRESOLVED,
        CONTINUES_NOT_EARLIER,
        CONTINUES_CYCLE,
        BOOKMARK_REUSED,
        RESULT_UNPAIRED,
        RESULT_NAME,
        NO_PROVIDER_PTR,
    ]
)

KNOWN_BLOCKS = frozenset({"text", "document", "tool_use", "tool_result"})
# RFC 6838 §4.2 restricted-name, as type "/" subtype (parameters after ";" allowed)
MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:\s*;\s*[^;]+)*\Z")
