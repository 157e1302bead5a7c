"""The realistic benchmark corpus: canonical messages shaped like stored agent sessions.

Where `synthetic.messages` writes one session after another, here several sessions run
at once and their messages interleave in the file, as a store that several agents
append to holds them. Each session has what an agent transcript carries: a long system
prompt, user turns (now and then with a screenshot), assistant turns that think (text
and a signature), call one to three tools in parallel and answer, each call's result in
its own `tool` message (now and then an error, or an image), and on every assistant
turn the model, the routing decision that chose it and the usage with its cost, as the
price table (`synthetic.PRICING_YAML`) computes it, cache tokens included. Every
message satisfies every rule of the validator, with `--tools` (`synthetic.TOOLS`) and
`--pricing`, so the bench measures the happy path.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import orjson

from ..core.convertkit import rfc3339
from .synthetic import MODELS, _text, _ulid

_ROUTING: tuple[tuple[str, str | None, str], ...] = (
    ("default", None, "workspace default"),
    ("rule", "long-context", "prompt longer than 32k tokens"),
    ("pattern", "code-review", "the request names a diff"),
    ("delegate", None, "the planner delegated this step"),
)
_COMMANDS = ("pytest -q tests/", "git diff --stat", "ls -la src/", "grep -rn TODO src/", "make lint")
_FILES = ("src/app.py", "src/models/user.py", "README.md", "tests/test_app.py", "pyproject.toml", "src/über.py")
# what a screenshot weighs in a store, base64 included (real ones are larger: the validator
# only checks the alphabet, so a few KB show its cost per byte)
_IMAGE_BYTES = 3000


def _cost(r: random.Random, p_in: str, p_out: str, cached: bool) -> dict[str, Any]:
    i, o = r.randint(800, 60_000), r.randint(20, 2_000)
    usage: dict[str, Any] = {"input_tokens": i, "output_tokens": o}
    cost = Decimal(i) * Decimal(p_in) + Decimal(o) * Decimal(p_out)
    if cached:  # a prompt-cache hit on the system prompt and the turns before
        c, w = r.randint(1_000, 40_000), r.choice((0, 0, r.randint(100, 4_000)))
        usage["cached_input_tokens"] = c
        cost += Decimal(c) * Decimal("0.30")
        if w:
            usage["cache_creation_input_tokens"] = w
            cost += Decimal(w) * Decimal("3.75")
    usage["cost_usd"] = f"{cost / Decimal(1_000_000):f}"
    usage["pricing_version"] = "2026-05-08"
    usage["latency_ms"] = r.randint(300, 40_000)
    return usage


def _tool_call(r: random.Random, tid: str) -> dict[str, Any]:
    name = r.choice(("read_file", "search_code", "run_tests", "run_tests"))
    if name == "read_file":
        args: dict[str, Any] = {"path": r.choice(_FILES), "limit": r.randint(50, 2_000)}
    elif name == "search_code":
        args = {"path": "src/", "query": _text(r, 1, 4), "limit": r.randint(10, 100)}
    else:
        args = {"path": "tests/", "command": r.choice(_COMMANDS)}
    return {"type": "tool_use", "id": tid, "name": name, "input": args}


def _image(r: random.Random) -> dict[str, Any]:
    data = base64.b64encode(r.randbytes(_IMAGE_BYTES * 3 // 4)).decode()
    return {"type": "image", "source": {"kind": "base64", "data": data}, "media_type": "image/png"}


class _Session:
    """One agent session: its fixed choices, and its messages one at a time (`next`)."""

    def __init__(self, r: random.Random, turns: int) -> None:
        self.r = r
        self.id = f"sess_{r.randrange(16**12):012x}"
        self.provider, model, self.p_in, self.p_out = r.choice(MODELS)
        self.model = f"{self.provider}:{model}"
        self.user = f"u_{r.randrange(16**6):06x}"
        self.team = f"t_{r.randrange(16**4):04x}"
        self.mode, self.rule, self.reason = r.choice(_ROUTING)
        self.plan = self._plan(turns)

    def _assistant_meta(self) -> dict[str, Any]:
        routing: dict[str, Any] = {"mode": self.mode, "chosen_model": self.model, "reason": self.reason}
        if self.rule is not None:
            routing["rule_name"] = self.rule
            routing["confidence"] = round(self.r.uniform(0.5, 1.0), 2)
            routing["alternatives_considered"] = [m for p, m, _, _ in MODELS if f"{p}:{m}" != self.model]
        cached = self.provider == "anthropic" and self.r.random() < 0.7
        return {
            "model": self.model,
            "provider": self.provider,
            "routing": routing,
            "usage": _cost(self.r, self.p_in, self.p_out, cached),
        }

    def _plan(self, turns: int) -> Iterator[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
        r = self.r
        prompt = "You are a coding agent working in the user's repository. " + _text(r, 150, 500)
        yield "system", [{"type": "text", "text": prompt}], {}
        for _ in range(turns):
            user: list[dict[str, Any]] = [{"type": "text", "text": _text(r, 3, 80)}]
            if r.random() < 0.03:
                user.append(_image(r))
            yield "user", user, {"user_id": self.user, "team_id": self.team}
            for _ in range(r.choice((0, 1, 1, 2, 3))):  # tool rounds before the answer
                blocks: list[dict[str, Any]] = []
                if self.provider == "anthropic" and r.random() < 0.6:
                    sig = base64.b64encode(r.randbytes(r.choice((96, 192, 384)))).decode()
                    blocks.append({"type": "thinking", "text": _text(r, 20, 200), "signature": sig})
                if r.random() < 0.7:
                    blocks.append({"type": "text", "text": _text(r, 3, 40)})
                calls = [_tool_call(r, "tu_" + _ulid(self.clock + k, r)) for k in range(r.choice((1, 1, 1, 2, 3)))]
                yield "assistant", blocks + calls, self._assistant_meta()
                for call in calls:
                    result: dict[str, Any] = {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": [{"type": "text", "text": _text(r, 5, 250)}],
                    }
                    if r.random() < 0.02:
                        result["content"].append(_image(r))
                    if r.random() < 0.08:
                        result["is_error"] = True
                    yield "tool", [result], {"parent_tool_use_id": call["id"]}
            yield "assistant", [{"type": "text", "text": _text(r, 10, 300)}], self._assistant_meta()

    clock = 0  # the time of the message being made (set by `agent_messages`), in microseconds


def agent_messages(n: int, *, seed: int = 11, concurrent: int = 8) -> Iterator[dict[str, Any]]:
    """`n` valid canonical messages of agent sessions, about `concurrent` of them at a time,
    their messages interleaved in one stream in time order."""
    r = random.Random(seed)
    clock = 1_778_241_600_000_000  # 2026-05-08T12:00:00Z in microseconds
    live: list[_Session] = []
    emitted = 0
    while emitted < n:
        while len(live) < concurrent:
            live.append(_Session(r, r.randint(3, 30)))
        s = r.choice(live)
        # a millisecond at least between two messages of the stream: ids grow with it
        clock += r.randint(1_000, 3_000_000)
        s.clock = clock
        step = next(s.plan, None)
        if step is None:
            live.remove(s)
            continue
        role, content, meta = step
        yield {"id": _ulid(clock, r), "session_id": s.id, "role": role, "content": content,
               "metadata": meta, "created_at": rfc3339(clock), "schema_version": 1}  # fmt: skip
        emitted += 1


def agent_jsonl_lines(n: int, *, seed: int = 11) -> Iterator[bytes]:
    for m in agent_messages(n, seed=seed):
        yield orjson.dumps(m) + b"\n"
