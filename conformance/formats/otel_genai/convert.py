"""`turnspec convert --from otel-genai --to canonical` and back: files around mapping.py.

Both directions refuse input that does not validate as its own format (nothing is
written); the engine (`conformance.convert.convert`) validates the output as the target
format before moving it into place.

- otel-genai -> canonical: each record becomes one session (its id derived from the
  input's bytes and the record's place); message ids and created_at are minted, counting
  up from the Unix epoch one millisecond per message (reported once per record, OT901).
  Output: JSON Lines, or a JSON array when `dst` ends in `.json`.
- canonical -> otel-genai: one record per session (`mapping.to_otel`); `.json` output
  holds one session's record, `.jsonl` one record per line. Message ids, session ids,
  created_at and schema_version have no OTel GenAI field (reported once per file).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...core.convertkit import ConvertContext, Document, IdMint, read_documents, report_losses, validated, write_values
from ...core.errors import InputError
from ...core.jsonio import dumps, read_input
from ..base import FileStats, Options
from ..canonical import sessions_of
from . import rules as R
from .checker import OtelGenAIRun
from .mapping import Session, from_otel, to_otel
from .reader import record_of


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    validated(src, R.NAME, OtelGenAIRun(Options()), FileStats(str(src), R.NAME))
    digest = hashlib.blake2b(read_input(src), digest_size=16).hexdigest()
    docs = [d for d in read_documents(src, Options().max_line_bytes) if isinstance(d, Document)]
    out: list[dict[str, Any]] = []
    for n, doc in enumerate(docs):
        rec = record_of(doc)
        s = Session(IdMint(digest, n), 0)
        session_id = s.mint.ulid(0, "session")
        messages, origin, losses, places = from_otel(rec, session_id, s)
        ctx.origins += [(at.path, at.line, at.pointer) for at in origin]
        report_losses(ctx, places, losses)
        if messages:
            ctx.lossy(
                rec.path, rec.line, rec.pointer,
                f"OTel GenAI records carry no session, message id or time: session_id {session_id} is derived from "
                f"the input, message ids are minted, and created_at is a placeholder counting up from "
                f"{messages[0]['created_at']} (one millisecond per message); assistant messages get placeholder "
                "routing and usage cost (provider from gen_ai.provider.name, the output message's model and tokens "
                "from gen_ai.response.model and gen_ai.usage.*, else unknown)",
                R.SYNTHESIZED,
            )  # fmt: skip
        out += messages
    write_values(dst, out, dst.suffix == ".json")


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    sessions = sessions_of(src, ctx, "OTel GenAI message", R.LOSSY)
    single = dst.suffix == ".json"
    if single and len(sessions) > 1:
        raise InputError(
            f"{src} holds {len(sessions)} sessions; a .json OTel GenAI file holds one record: "
            "write .jsonl (one record per line, per session) or split the file by session_id"
        )
    if sessions:
        ctx.lossy(
            str(src), None, "",
            "message ids, session_id, created_at and schema_version have no OTel GenAI field; dropped",
            R.LOSSY,
        )  # fmt: skip
    records: list[dict[str, Any]] = []
    for msgs in sessions.values():
        record, losses = to_otel([r.value for r in msgs])
        report_losses(ctx, msgs, losses)
        records.append(record)
    if single:
        dst.write_bytes((dumps(records[0], indent=True) if records else b"[]") + b"\n")
    else:
        write_values(dst, records, False)
