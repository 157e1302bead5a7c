"""Issue 29: in TypeScript, `b.type === "text"` cannot narrow a `ContentBlock` (the unknown
block's `type` is any string), so `turnspec models --target typescript` writes `guards.ts`:
`isTextBlock(b): b is TextBlock` per member of each tagged union, `isKnownContentBlock`.
The oracle of the tags is the schema files themselves, read here without the generator."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.core.schemas import schema_set
from conformance.schema.models import json2ts, typescript_guards


def _known_blocks(rev: str) -> dict[str, str]:
    """title -> `type` const of each member of known-content-block.json, from the schema files."""
    docs = schema_set("canonical", rev).documents
    out = {}
    for branch in docs["known-content-block.json"]["oneOf"]:
        member = docs[branch["$ref"].split("#")[0]]
        out[member["title"]] = member["properties"]["type"]["const"]
    return out


@pytest.mark.parametrize("rev", ["v1", "v2"])
def test_a_guard_per_known_block_reads_its_type(rev: str) -> None:
    text = typescript_guards("canonical", rev)
    blocks = _known_blocks(rev)
    assert len(blocks) >= 6
    for title, tag in blocks.items():
        body = re.search(rf"export function is{title}\(v: unknown\): v is {title} \{{\n(.*?)\n\}}", text, re.S)
        assert body is not None, title
        assert f'tagOf(v, "type") === "{tag}"' in body.group(1), (title, body.group(1))
    assert "export function isKnownContentBlock(v: unknown): v is KnownContentBlock {" in text
    [values] = re.findall(r"export const KNOWN_CONTENT_BLOCK_TYPES: readonly string\[\] = \[(.*)\];", text)
    assert sorted(re.findall(r'"([^"]+)"', values)) == sorted(blocks.values())
    # the open union gets no guard of its own: any object with a string `type` may be one
    assert "isContentBlock" not in text
    assert 'export type * from "./index";' in text


def test_stream_events_get_guards_too() -> None:
    text = typescript_guards("canonical", "v1")
    doc = schema_set("canonical", "v1").documents["stream-event.json"]
    for name, sub in doc["$defs"].items():
        tag = sub.get("properties", {}).get("type", {}).get("const")
        if tag is not None:
            assert f'=== "{tag}";' in text, name
    assert "export function isStreamEvent(v: unknown): v is StreamEvent {" in text


JSON2TS = json2ts()
TSC = os.environ.get("TURNSPEC_TSC") or shutil.which("tsc")


@pytest.mark.skipif(
    JSON2TS is None or TSC is None or shutil.which("node") is None,
    reason="json-schema-to-typescript and tsc are not installed (npm install json-schema-to-typescript@16 "
    "typescript@5; TURNSPEC_JSON2TS, TURNSPEC_TSC); Python CI does not need npm",
)
def test_guards_narrow_a_content_block_under_tsc(tmp_path: Path) -> None:
    assert main(["models", "--target", "typescript", str(tmp_path / "ts")]) == 0
    assert (tmp_path / "ts" / "guards.ts").is_file()
    (tmp_path / "consumer.ts").write_text(
        textwrap.dedent(
            """
            import { isKnownContentBlock, isTextBlock, isToolUseBlock, type Message } from "./ts/guards";

            export function texts(m: Message): string[] {
              const out: string[] = [];
              for (const b of m.content) {
                if (isTextBlock(b)) out.push(b.text);
                else if (isToolUseBlock(b)) out.push(b.name);
                if (isKnownContentBlock(b) && b.type === "thinking") out.push(b.text);
              }
              return out;
            }
            """
        )
    )
    (tmp_path / "wrong.ts").write_text(
        'import { isTextBlock, type Message } from "./ts/guards";\n'
        "export function wrong(m: Message): string {\n"
        "  const b = m.content[0];\n"
        '  if (isTextBlock(b)) { const t: "tool_use" = b.type; return t; }\n'
        "  return '';\n"
        "}\n"
    )
    proc = subprocess.run(
        [TSC, "--strict", "--noEmit", "--target", "es2020", "--skipLibCheck", "consumer.ts", "wrong.ts"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in proc.stdout.splitlines() if "error TS" in line]
    # narrowed to TextBlock, whose `type` is "text": only wrong.ts line 4 fails
    assert errors and all(line.startswith("wrong.ts(4,") for line in errors), proc.stdout
