"""TC201-TC203: lossy projection (a WARN line per dropped block, absent from the wire, critical fails).

Besides the block types an adapter declares it cannot carry, images whose source the API
cannot carry are probed: a `url` image where the record says the API takes no image URLs
(Ollama: base64 only), and a `file_ref` image everywhere (a workspace path no API can
fetch; adapters do no I/O, so the harness must inline it). Each must be dropped with the
§7.3 WARN line and leave neither its URL nor its path on the wire (not as text either), or
be refused with the documented error naming the block (contract §4.4: "Drop cleanly or
fail").
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from typing import Any

from ...adapters.errors import AdapterError
from ...adapters.protocol import Adapter, capabilities_of
from .. import rules as R
from ..capture import capture_warnings
from ..outcome import Outcome
from ..scripts import PNG_2PX, conversation, mark
from .common import Env, body_text, check, crash, drop_problem, opts, outcome, render, wire_api_of

# canonical §7.3, the sentences a dropped image source follows (TC201 and TC202 quote them)
DROP_RULE = (
    'canonical §7.3: "Drop the unrepresentable content (default)", "Write a structured log entry at WARN level", '
    '"Never silently corrupt"'
)


def lossy_probes(a: Adapter) -> list[tuple[str, str, dict[str, Any], str]]:
    """(block_type, role, block, marker) the adapter's declarations say it cannot carry."""
    caps = capabilities_of(a)
    probes: list[tuple[str, str, dict[str, Any], str]] = [
        (
            "x-turnspec-probe",
            "user",
            {"type": "x-turnspec-probe", "payload": mark("probe")},
            mark("probe"),
        )
    ]
    if not caps.get("supports_thinking"):
        probes.append(
            (
                "thinking",
                "assistant",
                {
                    "type": "thinking",
                    "text": mark("probe-thinking"),
                    "signature": mark("probe-sig"),
                },
                mark("probe-thinking"),
            )
        )
        probes.append(
            (
                "redacted_thinking",
                "assistant",
                {"type": "redacted_thinking", "data": mark("probe-redacted")},
                mark("probe-redacted"),
            )
        )
    if not caps.get("supports_images"):
        probes.append(
            (
                "image",
                "user",
                {
                    "type": "image",
                    "source": {"kind": "base64", "data": PNG_2PX},
                    "media_type": "image/png",
                },
                PNG_2PX,
            )
        )
    else:
        data = base64.b64encode(mark("probe-image").encode()).decode()
        probes.append(
            (
                "image",
                "user",
                {
                    "type": "image",
                    "source": {"kind": "base64", "data": data},
                    "media_type": "image/x-turnspec-probe",
                },
                data,
            )
        )
    return probes


def why_dropped(block: dict[str, Any], caps: dict[str, Any]) -> str:
    """Why the probe `block` cannot travel, for the failing case's reason."""
    btype = block.get("type")
    if btype == "x-turnspec-probe":
        return "x-turnspec-probe is a block type no provider's wire knows, canonical §10.3"
    if btype in ("thinking", "redacted_thinking"):
        return "the adapter declares supports_thinking false"
    source = block.get("source") or {}
    if btype == "image" and not caps.get("supports_images"):
        return "the adapter declares supports_images false"
    if source.get("kind") == "file_ref":
        return "a file_ref image is a workspace path no API can fetch, and adapters do no I/O"
    if source.get("kind") == "url":
        return "the API's record says it takes no image URLs"
    accepted = ", ".join(caps.get("accepted_image_media_types") or []) or "none"
    return f"its media type {block.get('media_type')} is not in the declared accepted_image_media_types: {accepted}"


def image_source_probes(a: Adapter) -> tuple[list[tuple[str, dict[str, Any], str]], list[str]]:
    """Images of a source kind the adapter's API cannot carry: ([(label, block, marker)],
    [why the url kind is not probed]). Only for adapters that take images (others drop every
    image, which `lossy_probes` covers)."""
    if not capabilities_of(a).get("supports_images"):
        return [], []
    api = wire_api_of(a)
    path = f"turnspec/{mark('probe-file-ref')}.png"
    probes = [("file_ref image in a user message", _image("file_ref", path), path)]
    skipped = []
    if api is None:
        skipped.append(f"no WireApi record named {a.wire_api!r} says whether the API takes image URLs")
    elif api.carries.images_url:
        skipped.append(f"{api.title} takes images by URL (its record's carries), so TC901 judges them")
    else:
        url = f"https://example.com/{mark('probe-url')}.png"
        probes.append((f"url image in a user message ({api.title} takes no image URLs)", _image("url", url), url))
    return probes, skipped


def _image(kind: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"kind": kind, "data": data}, "media_type": "image/png"}


@check(R.LOSSY_WARN, R.LOSSY_ABSENT, R.LOSSY_CRITICAL)
def lossy(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        caps = capabilities_of(a)
        sources, skipped = image_source_probes(a)
        for why in skipped:
            yield outcome(R.LOSSY_WARN, s, "skip", "url image the API cannot carry", why)
        cases = [(b, r, blk, m, f"{b} in a {r} message", "") for b, r, blk, m in lossy_probes(a)]
        cases += [("image", "user", blk, m, label, f" ({DROP_RULE})") for label, blk, m in sources]
        for btype, role, block, marker, label, rule in cases:
            msgs, tools = conversation(
                a.provider,
                thinking=bool(caps.get("supports_thinking")),
                images=bool(caps.get("supports_images")),
                tools=bool(caps.get("supports_tools")),
            )
            target = [m for m in msgs if m["role"] == role][-1]
            target["content"].append(copy.deepcopy(block))
            index = len(target["content"]) - 1
            try:
                with capture_warnings() as recs:
                    req = render(a, msgs, tools, opts(a))
            except Exception as exc:
                if (
                    rule
                    and isinstance(exc, AdapterError)
                    and getattr(exc, "block_type", None) == btype
                    and getattr(exc, "message_id", None) == target["id"]
                ):
                    # an image source the API cannot carry, refused with the documented error
                    # naming the block (contract §4.4: "Drop cleanly or fail"): nothing was sent
                    why = f"refused with {type(exc).__name__} naming the image (contract §4.4: drop cleanly or fail)"
                    yield outcome(R.LOSSY_WARN, s, "pass", label, why)
                    yield outcome(R.LOSSY_ABSENT, s, "pass", label, why)
                    continue
                yield outcome(R.LOSSY_WARN, s, "fail", label, crash(exc))
                continue
            why = why_dropped(block, caps)
            problem = drop_problem(recs, btype, target, a)
            yield outcome(
                R.LOSSY_WARN,
                s,
                "fail" if problem else "pass",
                label,
                f"{problem}; it cannot travel: {why}{rule}" if problem else "",
            )
            leaked = marker in body_text(req.body)
            yield outcome(
                R.LOSSY_ABSENT,
                s,
                "fail" if leaked else "pass",
                label,
                f"content[{index}], the {btype} block, reached the wire ({marker[:60]} is in the rendered body); "
                f"it cannot travel: {why}{rule}"
                if leaked
                else "",
            )
            crit = copy.deepcopy(msgs)
            tgt = next(m for m in crit if m["id"] == target["id"])
            tgt["metadata"][env.critical_key] = [index]
            try:
                with capture_warnings():
                    render(a, crit, tools, opts(a, critical_key=env.critical_key))
            except AdapterError as exc:
                named = (getattr(exc, "block_type", None), getattr(exc, "message_id", None))
                ok = named == (btype, target["id"])
                yield outcome(
                    R.LOSSY_CRITICAL,
                    s,
                    "pass" if ok else "fail",
                    label,
                    ""
                    if ok
                    else f"{type(exc).__name__} names block_type {named[0]!r} and message_id {named[1]!r}; "
                    f"expected {btype!r} and {target['id']}",
                )
            except Exception as exc:
                yield outcome(R.LOSSY_CRITICAL, s, "fail", label, crash(exc))
            else:
                yield outcome(
                    R.LOSSY_CRITICAL,
                    s,
                    "fail",
                    label,
                    f"content[{index}], the {btype} block, was marked critical (message metadata.{env.critical_key} = "
                    f"[{index}]), yet the request rendered: expected CriticalBlockError naming block_type {btype!r} "
                    f"and message_id {target['id']} (exec: an error of kind critical_block); it cannot travel: {why}",
                )
