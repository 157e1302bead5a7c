"""Canonical revision 1 <-> 2: the audio block and metadata.stop_reason.

Revision 2 is additive (§10.2), so a revision-1 document is already a revision-2
document and nothing is rewritten; `schema_version` stays 1. What the migration must
still do is refuse the documents whose meaning *would* change: content that revision 1
tolerated as unknown (§10.3) but revision 2 reads with a meaning. A block typed `audio`
or a metadata field named `stop_reason` written before revision 2 existed is such
content; the fuzz proof (dictionary-driven generation) finds both. They pass only when
they already are well-formed revision-2 content, so the rule engine's verdict cannot
change. Back to revision 1 is the identity too, and lossless.
"""

from __future__ import annotations

import binascii
import functools
from typing import Any

from ..core.schema_validation import SchemaValidator
from ..core.schemas import schema_set
from .registry import Change, Migration, MigrationError

AUDIO_ROLES = ("user", "assistant")


@functools.cache
def _validator(name: str) -> SchemaValidator:
    return SchemaValidator(schema_set("canonical", "v2"), name)


def _audio_problem(block: dict[str, Any], role: str | None) -> str | None:
    # function-level import: the canonical rule modules load only when a migration checks audio
    from ..formats.canonical.invariants import file_ref_problem

    if not _validator("audio-block.json").is_valid(block):
        errors = _validator("audio-block.json").errors(block)
        return f"is not a revision-2 AudioBlock ({errors[0].message if errors else 'invalid'})"
    if role is not None and role not in AUDIO_ROLES:
        return f"is not allowed in a {role} message in revision 2"
    src = block["source"]
    if src["kind"] == "file_ref" and file_ref_problem(src["data"]):
        return "has a file_ref revision 2 rejects"
    if src["kind"] == "base64":
        try:
            binascii.a2b_base64(src["data"], strict_mode=True)
        except (binascii.Error, ValueError):
            return "has base64 data revision 2 rejects"
    return None


def _check_blocks(blocks: Any, where: str, role: str | None) -> None:
    if not isinstance(blocks, list):
        return
    for i, b in enumerate(blocks):
        if not isinstance(b, dict):
            continue
        if b.get("type") == "audio":
            problem = _audio_problem(b, role)
            if problem:
                raise MigrationError(f"{where}/{i}", f"block typed 'audio' predates revision 2 and {problem}")
        elif b.get("type") == "tool_result":
            _check_blocks(b.get("content"), f"{where}/{i}/content", None)


def forward(doc: Any) -> Any:
    """Revision 1 -> 2: the identity, or a refusal (see module docstring)."""
    if isinstance(doc, dict):
        _check_blocks(
            doc.get("content"),
            "/content",
            doc.get("role") if isinstance(doc.get("role"), str) else None,
        )
        meta = doc.get("metadata")
        if isinstance(meta, dict) and "stop_reason" in meta:
            node = _validator("message-metadata.json").schema["properties"]["stop_reason"]
            value = meta["stop_reason"]
            allowed = node["anyOf"][0]["enum"]
            if not (value is None or value in allowed):
                raise MigrationError(
                    "/metadata/stop_reason",
                    f"metadata field stop_reason predates revision 2 and holds {value!r}, "
                    f"not one of {', '.join(allowed)} or null",
                )
    return doc


def backward(doc: Any) -> Any:
    """Revision 2 -> 1: the identity (revision 1 tolerates audio and stop_reason)."""
    return doc


def detect(doc: Any) -> int:
    """Revision 2 when the message uses well-formed revision-2 content, else 1.

    Both revisions say schema_version 1, so the shape decides; content that only looks
    like revision 2 (an `audio` block revision 2 would reject) is revision-1 content,
    which `forward` then refuses, with its location.
    """
    if not isinstance(doc, dict):
        return 1
    try:
        forward(doc)
    except MigrationError:
        return 1
    meta = doc.get("metadata")
    if isinstance(meta, dict) and "stop_reason" in meta:
        return 2

    def has_audio(blocks: Any) -> bool:
        return isinstance(blocks, list) and any(
            isinstance(b, dict)
            and (b.get("type") == "audio" or (b.get("type") == "tool_result" and has_audio(b.get("content"))))
            for b in blocks
        )

    return 2 if has_audio(doc.get("content")) else 1


MIGRATION = Migration(
    format="canonical",
    source=1,
    forward=forward,
    backward=backward,
    lossless=True,
    summary="additive revision 2: audio block, metadata.stop_reason (schema_version stays 1)",
    changes=(
        Change(
            "/content/*",
            "block-type-added",
            "`audio` block (AudioBlock: source, media_type audio/*, transcript), in user and assistant messages",
        ),
        Change(
            "/metadata/stop_reason",
            "field-added",
            "optional `stop_reason`: end_turn, max_tokens, stop_sequence, tool_use, cancelled, error, or null",
        ),
    ),
)
