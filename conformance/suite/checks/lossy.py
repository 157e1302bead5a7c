"""TC201-TC203: lossy projection (a WARN line per dropped block, absent from the wire, critical fails)."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from typing import Any

from ...adapters.errors import AdapterError
from ...adapters.protocol import Adapter
from .. import rules as R
from ..capture import capture_warnings
from ..outcome import Outcome
from ..scripts import PNG_2PX, conversation, mark
from .common import Env, body_text, check, crash, drop_problem, o, opts


def lossy_probes(a: Adapter) -> list[tuple[str, str, dict[str, Any], str]]:
    """(block_type, role, block, marker) the adapter's declarations say it cannot carry."""
    caps = a.capabilities
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


@check(R.LOSSY_WARN, R.LOSSY_ABSENT, R.LOSSY_CRITICAL)
def lossy(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        caps = a.capabilities
        for btype, role, block, marker in lossy_probes(a):
            msgs, tools = conversation(
                a.provider,
                thinking=bool(caps.get("supports_thinking")),
                images=bool(caps.get("supports_images")),
                tools=bool(caps.get("supports_tools")),
            )
            target = [m for m in msgs if m["role"] == role][-1]
            target["content"].append(copy.deepcopy(block))
            index = len(target["content"]) - 1
            label = f"{btype} in a {role} message"
            try:
                with capture_warnings() as recs:
                    req = a.to_wire(msgs, tools, opts(a))
            except Exception as exc:
                yield o(R.LOSSY_WARN, s, "fail", label, crash(exc))
                continue
            problem = drop_problem(recs, btype, target, a)
            yield o(R.LOSSY_WARN, s, "fail" if problem else "pass", label, problem or "")
            leaked = marker in body_text(req.body)
            yield o(
                R.LOSSY_ABSENT,
                s,
                "fail" if leaked else "pass",
                label,
                f"{marker[:40]} reached the wire" if leaked else "",
            )
            crit = copy.deepcopy(msgs)
            tgt = next(m for m in crit if m["id"] == target["id"])
            tgt["metadata"][env.critical_key] = [index]
            try:
                with capture_warnings():
                    a.to_wire(crit, tools, opts(a, critical_key=env.critical_key))
            except AdapterError as exc:
                ok = getattr(exc, "block_type", None) == btype and getattr(exc, "message_id", None) == target["id"]
                yield o(
                    R.LOSSY_CRITICAL,
                    s,
                    "pass" if ok else "fail",
                    label,
                    "" if ok else f"{type(exc).__name__} lacks block_type={btype!r} or the message_id",
                )
            except Exception as exc:
                yield o(R.LOSSY_CRITICAL, s, "fail", label, crash(exc))
            else:
                yield o(
                    R.LOSSY_CRITICAL,
                    s,
                    "fail",
                    label,
                    f"block marked critical (metadata.{env.critical_key}) dropped and the request still rendered",
                )
