"""The fast path's compiled loops (`fast/_walk.c`) against their Python (the oracle).

`walk` is `mirror._walk_py`, `opaque_ok` is `OpaqueCheck.ok_py` and `pair_tools` is
`sessions.pair_tools_py`, compiled at install by hatch_build.py. Each must give exactly
what its Python gives: the same suspects, tool blocks and tool_use blocks (the same
objects, in order) on realistic, synthetic and broken corpora under several rule
selections; the same verdict on raw values of every byte sequence; the same pairing on
any tool blocks. Every edit below must also make its message a suspect (a loop that
cleared it would pass what `_local` refuses). tests/test_fast_path.py then compares the
whole fast path, compiled loops included, with the exact path.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import shlex
import shutil
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.api import validate
from conformance.benchmarks.realistic import agent_messages
from conformance.benchmarks.synthetic import messages
from conformance.core.findings import Selection
from conformance.core.jsonio import dumps
from conformance.formats import Options
from conformance.formats.canonical.fast import COMPILED_SWITCHES, FastPath, batch, compiled, mirror
from conformance.formats.canonical.fast.batch import Columns, column_py, present_py, times
from conformance.formats.canonical.fast.mirror import _walk_py
from conformance.formats.canonical.fast.sessions import Pairs, pair_tools_py
from conformance.parallel.chunks import canonical_run
from tests.test_fast_path import PRICING, TOOLS, _write, broken_corpus, same

ROOT = Path(__file__).resolve().parents[1]


def _compiler() -> str | None:
    """The C compiler hatch_build.py calls, when it and Python's headers are here."""
    words = shlex.split(sysconfig.get_config_var("LDSHARED") or "")
    if not words or not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return None
    return shutil.which(words[0])


def _module() -> Any:
    state = compiled.status()
    if state == "stale":
        pytest.fail("fast/_walk.c changed since its build: reinstall (pip install -e .) to rebuild it")
    if state == "not built" and _compiler() is not None and not os.environ.get("TURNSPEC_PURE_PYTHON"):
        pytest.fail(f"a C compiler is here ({_compiler()}) but hatch_build.py did not build fast/_walk.c: reinstall")
    if state != "compiled":
        pytest.skip(f"the compiled loops are {state} here: only the Python runs")
    return compiled._built()


OPTIONS = {
    "default": Options(),
    "TS1": Options(selection=Selection(select=("TS1",))),
    "no-role-content": Options(selection=Selection(ignore=("TS102", "TS119", "TS121"))),
    "tools-pricing": Options(tools=TOOLS, pricing=PRICING),
    "strict": Options(selection=Selection(strict=True)),
}


def _batches(fast: FastPath, lines: list[bytes], size: int = 40) -> Iterator[tuple[list[Any], list[Any], list[Any]]]:
    """The decodable lines of `lines` as batches of (msgs, metas, ats)."""
    decoded = []
    for line in lines:
        try:
            decoded.append(fast.decoder.decode(line))
        except (msgspec.MsgspecError, UnicodeError, RecursionError):
            continue
    for i in range(0, len(decoded), size):
        msgs = decoded[i : i + size]
        cols = Columns(msgs, fast.always)
        yield msgs, cols.raw(("metadata",)), times(cols.raw(("created_at",)))[0]


def _both(options: Options, lines: list[bytes]) -> tuple[list[Any], list[Any]]:
    """(compiled, Python) results of each batch of `lines`, each with its own run."""
    walk = _module().walk
    out: tuple[list[Any], list[Any]] = ([], [])
    for side, fn in enumerate((walk, _walk_py)):
        fast = FastPath(canonical_run(options))
        for msgs, metas, ats in _batches(fast, lines):
            suspects: set[int] = set()
            tools, uses, owners = fn(msgs, metas, ats, suspects, fast._walk_context())
            # the tool_use blocks by position (each side decoded its own objects)
            where = {id(b): (k, i) for k, m in enumerate(msgs) for i, b in enumerate(m.content)}
            out[side].append((sorted(suspects), tools, [where[id(b)] for b in uses], owners))
    return out


def _corpus(kind: str, seed: int) -> list[bytes]:
    if kind == "agents":
        return [dumps(m) for m in agent_messages(400, seed=seed)]
    if kind == "plain":
        return [dumps(m) for m in messages(400, seed=seed)]
    return [x.rstrip(b"\n") for x in broken_corpus(400, seed, rate=0.5, deep=False)]


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize(("kind", "seed"), [("agents", 5), ("plain", 6), ("broken", 7), ("broken", 8)])
def test_walk_is_its_python_on_corpora(options: str, kind: str, seed: int) -> None:
    c, py = _both(OPTIONS[options], _corpus(kind, seed))
    assert c == py
    assert sum(len(t) for _s, t, _u, _o in c) > 0  # the corpus has tool blocks the loop kept


def _first(role: str, types: tuple[str, ...]) -> dict[str, Any]:
    for m in agent_messages(400, seed=2):
        if m["role"] == role and tuple(b["type"] for b in m["content"])[: len(types)] == types:
            return m
    raise AssertionError(f"no {role} message starting with {types}")


def _deep(depth: int) -> Any:
    v: Any = 1
    for _ in range(depth):
        v = {"a": v}
    return v


def _meta(**kw: Any) -> Callable[[dict[str, Any]], None]:
    def go(m: dict[str, Any]) -> None:
        for k, v in kw.items():
            if v is None:
                m["metadata"].pop(k, None)
            else:
                m["metadata"][k] = v

    return go


def _content(fn: Callable[[list[Any]], Any]) -> Callable[[dict[str, Any]], None]:
    def go(m: dict[str, Any]) -> None:
        m["content"] = fn(m["content"])

    return go


_IMAGE = {"type": "image", "media_type": "image/png", "source": {"kind": "base64", "data": "not base64!"}}
# (role and first block types of the message edited, the edit): each makes the message a suspect
EDITS: dict[str, tuple[str, tuple[str, ...], Callable[[dict[str, Any]], None]]] = {
    "status-not-complete": ("assistant", ("text",), _meta(status="partial")),
    "email-user-id": ("user", ("text",), _meta(user_id="someone@example.com")),
    "assistant-no-model": ("assistant", ("text",), _meta(model=None)),
    "assistant-no-provider": ("assistant", ("text",), _meta(provider=None)),
    "assistant-no-routing": ("assistant", ("text",), _meta(routing=None)),
    "assistant-no-usage": ("assistant", ("text",), _meta(usage=None)),
    "routing-other-model": ("assistant", ("text",), lambda m: m["metadata"]["routing"].update(chosen_model="x:y")),
    "provider-mismatch": ("assistant", ("text",), _meta(provider="someone-else")),
    "user-provider-mismatch": ("user", ("text",), _meta(model="openai:gpt-5", provider="anthropic")),
    "stop-cancelled": ("assistant", ("text",), _meta(stop_reason="cancelled")),
    "provider-raw-deep": ("assistant", ("text",), _meta(provider_raw={"x": _deep(220)})),
    "tool-two-blocks": ("tool", ("tool_result",), _content(lambda c: c + copy.deepcopy(c))),
    "tool-parent-mismatch": ("tool", ("tool_result",), _meta(parent_tool_use_id="tu_01JZ0000000000000000000000")),
    "tool-text-block": ("tool", ("tool_result",), _content(lambda c: [{"type": "text", "text": "x"}])),
    "tool-result-bad-image": ("tool", ("tool_result",), lambda m: m["content"][0].setdefault("content", []).append(_IMAGE)),
    "user-empty-content": ("user", ("text",), _content(lambda c: [])),
    "user-tool-use": ("user", ("text",), _content(lambda c: [*c, {"type": "tool_use", "id": "tu_01JZ0000000000000000000001", "name": "read_file", "input": {"path": "a"}}])),
    "tool-use-deep-input": ("assistant", ("text", "tool_use"), lambda m: m["content"][1].update(input={"x": _deep(220)})),
    "user-bad-image": ("user", ("text",), _content(lambda c: [*c, _IMAGE])),
    "assistant-bad-image-second": ("assistant", ("text", "tool_use"), _content(lambda c: [*c, _IMAGE])),
}  # fmt: skip
V2_EDITS = frozenset({"stop-cancelled"})


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_walk_makes_every_edited_message_a_suspect(edit: str) -> None:
    role, types, fn = EDITS[edit]
    clean = _first(role, types)
    edited = copy.deepcopy(clean)
    fn(edited)
    lines = [dumps(clean), dumps(edited)]
    options = Options(revisions=("v2",)) if edit in V2_EDITS else Options()  # stop_reason is v2's
    fast = FastPath(canonical_run(options))
    assert len(next(iter(_batches(fast, lines)))[0]) == 2, "the edited message must decode (the loop sees it)"
    c, py = _both(options, lines)
    assert c == py
    assert c[0][0] == [1], f"{edit}: the compiled loop must leave the edited message to `_local`"


def test_walk_refuses_wrong_arguments() -> None:
    walk = _module().walk
    with pytest.raises(TypeError):
        walk([], [], [], set())
    with pytest.raises(TypeError):
        walk([], [], [], set(), (None,) * 3)


# ---- opaque_ok: raw values of every kind ----

_TEXT_BYTES = st.binary(max_size=24).map(lambda b: bytes(x for x in b if x >= 0x20 and x not in b'"\\'))


def _raw_line(template: dict[str, Any], text: bytes) -> bytes:
    """`template` (a user message whose first block is text) with that text's bytes."""
    line = dumps(template)
    head, _, rest = line.partition(b'"text":"')
    _old, _, tail = rest.partition(b'"')
    return head + b'"text":"' + text + b'"' + tail


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_TEXT_BYTES, st.sampled_from([b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"\xc3\xbc", b"\xff"])), min_size=1, max_size=6))  # fmt: skip
def test_opaque_ok_is_its_python_on_any_bytes(pieces: list[bytes]) -> None:
    _module()
    fast = FastPath(canonical_run(Options()))
    assert fast.opaque is not None
    # a user's text block, and the text inside a tool message's tool_result (nested)
    for template in (_first("user", ("text",)), _first("tool", ("tool_result",))):
        msgs = [fast.decoder.decode(_raw_line(template, p)) for p in pieces]
        assert fast.opaque.ok(msgs) is fast.opaque.ok_py(msgs)
        for m in msgs:  # one at a time too: the verdict of each value
            assert fast.opaque.ok([m]) is fast.opaque.ok_py([m])


def test_opaque_ok_refuses_a_raw_value_that_is_not_a_string() -> None:
    _module()
    fast = FastPath(canonical_run(Options()))
    assert fast.opaque is not None
    template = dumps(_first("user", ("text",)))
    head, _, rest = template.partition(b'"text":"')
    _old, _, tail = rest.partition(b'"')
    msgs = [fast.decoder.decode(head + b'"text":12' + tail)]
    assert fast.opaque.ok(msgs) is False is fast.opaque.ok_py(msgs)
    nested = [fast.decoder.decode(dumps(m)) for m in agent_messages(200, seed=4) if m["role"] == "tool"]
    assert nested and fast.opaque.ok(nested) is True is fast.opaque.ok_py(nested)


# ---- pair_tools: any tool blocks ----

_ENTRY = st.tuples(st.integers(0, 3), st.booleans(), st.sampled_from(["a", "b", "c", "d"]))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.integers(0, 7), st.lists(_ENTRY, min_size=1, max_size=3), max_size=6), st.lists(st.sampled_from(["s1", "s2"]), min_size=8, max_size=8))  # fmt: skip
def test_pair_tools_is_its_python(tools: dict[int, list[tuple[int, bool, str]]], sids: list[str]) -> None:
    mod = _module()
    tools = dict(sorted(tools.items()))  # message order, as the batch gives them
    got = mod.pair_tools(tools, sids)
    want = pair_tools_py(tools, sids)
    assert (None if got is None else Pairs(*got)) == want


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(0, 7), st.lists(_ENTRY, max_size=3), max_size=6))
def test_tool_ids_is_its_python(tools: dict[int, list[tuple[int, bool, str]]]) -> None:
    assert _module().tool_ids(tools) == mirror.tool_ids_py(tools)


def test_tool_ids_lists_each_kept_block_with_its_message() -> None:
    tools = {2: [(0, True, "x"), (3, False, "y")], 5: [(1, False, "z")]}
    assert _module().tool_ids(tools) == (["x", "y", "z"], [2, 2, 5]) == mirror.tool_ids_py(tools)
    with pytest.raises(TypeError):
        _module().tool_ids({0: [(0, True)]})


def test_pair_tools_pairs_a_real_batch() -> None:
    mod = _module()
    tools = {0: [(0, True, "x"), (1, True, "y")], 1: [(0, False, "x")], 3: [(0, False, "z")]}
    sids = ["s", "s", "t", "s"]
    want = Pairs(["x", "y"], [0, 0], [(3, "z")], {"s": ["x"]}, [(0, 1, "y")])
    assert Pairs(*mod.pair_tools(tools, sids)) == want == pair_tools_py(tools, sids)
    assert mod.pair_tools({0: [(0, False, "x")], 1: [(0, False, "x")]}, ["s", "s"]) is None  # a second result


# ---- the build hook (hatch_build.py) ----


def _hook() -> Any:
    spec = importlib.util.spec_from_file_location("turnspec_hatch_build", ROOT / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_build_hook_goes_on_without_a_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No compiler: the wheel is built without the loop (pure Python), and one line says why."""
    mod = _hook()
    real = sysconfig.get_config_var
    monkeypatch.setattr(
        mod.sysconfig,
        "get_config_var",
        lambda name: "turnspec-no-such-cc -shared" if name == "LDSHARED" else real(name),
    )
    hook = mod.CustomBuildHook(str(ROOT), {}, None, None, str(tmp_path), "wheel")
    data: dict[str, Any] = {"force_include": {}}
    hook.initialize("standard", data)
    assert data == {"force_include": {}}  # a pure wheel: nothing added, no platform tag
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "was not built" in err[0] and "the Python loop runs" in err[0]
    monkeypatch.setenv("TURNSPEC_PURE_PYTHON", "1")
    hook.initialize("standard", data)
    assert data == {"force_include": {}}
    assert "TURNSPEC_PURE_PYTHON" in capsys.readouterr().err


def test_the_build_hook_builds_a_loop_that_loads(tmp_path: Path) -> None:
    if _compiler() is None:
        pytest.skip("no C compiler or no Python headers here: the hook's fallback is tested above")
    mod = _hook()
    hook = mod.CustomBuildHook(str(ROOT), {}, None, None, str(tmp_path), "wheel")
    data: dict[str, Any] = {"force_include": {}}
    hook.initialize("standard", data)
    [(built, target)] = data["force_include"].items()
    assert target == f"conformance/formats/canonical/fast/{Path(built).name}"
    assert data["pure_python"] is False and data["infer_tag"] is True
    spec = importlib.util.spec_from_file_location("conformance.formats.canonical.fast._walk", built)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert compiled.source_hash() == loaded.SOURCE  # the hash of the source it was built from
    assert not list(Path(built).parent.glob(".*.tmp"))  # renamed into place


@pytest.mark.parametrize("options", ["default", "tools-pricing"])
def test_the_python_loops_give_the_reports_the_compiled_ones_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: str
) -> None:
    """Where the loops were not built the whole fast path runs on their Python: the same
    report as the exact path, and as the compiled loops, byte for byte."""
    _module()
    lines = broken_corpus(600, 11, rate=0.3) + [dumps(m) for m in agent_messages(300, seed=9)]
    path = _write(tmp_path, [x.rstrip(b"\n") for x in lines])
    kw = {"tools": TOOLS, "pricing": PRICING} if options == "tools-pricing" else {}
    compiled_report = dumps(validate([path], Options(**kw)).as_dict())
    for mod, name in COMPILED_SWITCHES:
        monkeypatch.setattr(mod, name, None)
    assert same(path, **kw) > 0  # fast (Python loops) == exact, and some lines were cleared
    assert dumps(validate([path], Options(**kw)).as_dict()) == compiled_report


# ---- column and present: the columns of a batch ----

PATHS = [("id",), ("metadata",), ("metadata", "model"), ("metadata", "usage"), ("metadata", "routing"), ("content",)]


@pytest.mark.parametrize(("kind", "seed"), [("agents", 5), ("plain", 6), ("broken", 7)])
def test_columns_are_their_python(kind: str, seed: int) -> None:
    mod = _module()
    fast = FastPath(canonical_run(Options()))
    for msgs, metas, _ats in _batches(fast, _corpus(kind, seed)):
        assert mod.column(msgs, "id") == column_py(msgs, "id")
        got = mod.column(metas, "model")
        assert got == column_py(metas, "model") and all(
            a is b for a, b in zip(got, column_py(metas, "model"), strict=True)
        )
        assert mod.present(got, msgspec.UNSET) == present_py(got)
        for path in PATHS:  # the whole of `Columns.present`, each side on its own
            with_c = Columns(msgs, fast.always).present(path)
            batch_c, batch_p = batch._COLUMN, batch._PRESENT
            try:
                batch._COLUMN = batch._PRESENT = None
                with_py = Columns(msgs, fast.always).present(path)
            finally:
                batch._COLUMN, batch._PRESENT = batch_c, batch_p
            assert with_c == with_py, path


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([None, msgspec.UNSET, "a", "", 0, "b"]), max_size=12))
def test_present_is_its_python(values: list[Any]) -> None:
    assert _module().present(values, msgspec.UNSET) == present_py(values)


def test_column_reads_what_getattr_reads() -> None:
    """A property, a plain class and a missing attribute go through getattr, as map does."""
    mod = _module()

    class P:
        @property
        def x(self) -> int:
            return 3

    class Q:
        x = 4

    assert mod.column([P(), Q(), P()], "x") == [3, 4, 3]
    with pytest.raises(AttributeError):
        mod.column([P(), object()], "x")


# ---- priced: the pricing loop ----


def _usage_template() -> dict[str, Any]:
    for m in agent_messages(60, seed=2):
        if m["metadata"].get("usage") and m["metadata"].get("model") == "anthropic:claude-sonnet-4-6":
            return m
    raise AssertionError("the realistic corpus has an assistant turn of anthropic:claude-sonnet-4-6 with usage")


def _priced_both(fast_c: FastPath, fast_py: FastPath, metas_c: list[Any], metas_py: list[Any]) -> tuple[Any, Any]:
    got_c: set[int] = set()
    got_py: set[int] = set()
    _module().priced(
        metas_c, got_c, fast_c._price_plans, fast_c._priced, msgspec.UNSET, fast_c.on["TS404"], mirror.USAGE_READS
    )
    mirror._priced_py(metas_py, got_py, fast_py._priced)
    return got_c, got_py


@pytest.mark.parametrize("options", ["tools-pricing", "no-role-content"])
@pytest.mark.parametrize(("kind", "seed"), [("agents", 5), ("plain", 6), ("broken", 7)])
def test_priced_is_its_python_on_corpora(options: str, kind: str, seed: int) -> None:
    opts = OPTIONS[options] if options == "tools-pricing" else Options(pricing=PRICING)
    fast_c, fast_py = FastPath(canonical_run(opts)), FastPath(canonical_run(opts))
    lines = _corpus(kind, seed)
    flagged = 0
    for (_m, metas_c, _a), (_m2, metas_py, _a2) in zip(_batches(fast_c, lines), _batches(fast_py, lines), strict=True):
        got_c, got_py = _priced_both(fast_c, fast_py, metas_c, metas_py)
        assert got_c == got_py
        flagged += len(got_c)
    if kind == "broken":
        assert flagged > 0  # the broken corpus has costs the table refutes


COSTS = st.one_of(
    st.text(alphabet="0123456789.", max_size=45),
    st.builds("{}.{}".format, st.integers(0, 10**25), st.integers(0, 10**25)),  # 30 to 50 digits
    st.integers(10**35, 10**40).map(str),
    st.sampled_from(["", ".", "0.1.2", "1e3", "-1", "\u0663", "0.0000000000000000000000000000000000001"]),
)
COUNTS = st.one_of(st.integers(0, 10**6), st.sampled_from([2**63 - 1, 2**63, 10**30, 10**400]))


@settings(max_examples=400, deadline=None)
@given(
    cost=COSTS,
    n_in=COUNTS,
    n_out=COUNTS,
    cached=st.one_of(st.none(), COUNTS),
    created=st.one_of(st.none(), COUNTS),
    model=st.sampled_from(["anthropic:claude-sonnet-4-6", "openai:gpt-5", "openai:unpriced"]),
    version=st.sampled_from(["2026-05-08", "1999-01-01"]),
    selection=st.sampled_from([(), ("TS404",), ("TS401",)]),
)
def test_priced_is_its_python_on_any_usage(
    cost: str,
    n_in: int,
    n_out: int,
    cached: int | None,
    created: int | None,
    model: str,
    version: str,
    selection: tuple[str, ...],
) -> None:
    """Every verdict of `priced` is `_priced`'s: costs that match and do not, counts past
    64 bits and products past 128 (where it asks `_priced`), buckets with no rate."""
    m = copy.deepcopy(_usage_template())
    usage = m["metadata"]["usage"]
    usage.update(input_tokens=n_in, output_tokens=n_out, cost_usd=cost, pricing_version=version)
    for name, count in (("cached_input_tokens", cached), ("cache_creation_input_tokens", created)):
        usage.pop(name, None)
        if count is not None:
            usage[name] = count
    m["metadata"]["model"] = model
    opts = Options(pricing=PRICING, selection=Selection(ignore=selection))
    fast_c, fast_py = FastPath(canonical_run(opts)), FastPath(canonical_run(opts))
    try:
        metas_c = [fast_c.decoder.decode(dumps(m)).metadata] * 2  # the second meets the plan the first made
        metas_py = [fast_py.decoder.decode(dumps(m)).metadata] * 2
    except msgspec.ValidationError:
        # msgspec reads no integer past 64 bits: such a line takes the exact path whole
        assert max(n_in, n_out, cached or 0, created or 0) >= 2**63
        return
    got_c, got_py = _priced_both(fast_c, fast_py, metas_c, metas_py)
    assert got_c == got_py


def test_priced_clears_a_right_cost_and_flags_a_wrong_one() -> None:
    """The compiled verdict on its own: the template's cost is the table's, one unit of
    its last digit more is not."""
    m = _usage_template()
    fast = FastPath(canonical_run(Options(pricing=PRICING)))
    right = fast.decoder.decode(dumps(m)).metadata
    m = copy.deepcopy(m)
    cost = m["metadata"]["usage"]["cost_usd"]
    m["metadata"]["usage"]["cost_usd"] = cost[:-1] + str((int(cost[-1]) + 1) % 10)
    wrong = fast.decoder.decode(dumps(m)).metadata
    fast._priced(right, right.model)  # the plan made, so the compiled arithmetic decides
    got: set[int] = set()
    _module().priced([right, wrong], got, fast._price_plans, fast._priced, msgspec.UNSET, True, mirror.USAGE_READS)
    assert got == {1}


def test_a_pricing_rule_the_compiled_loop_does_not_know_runs_the_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule of pricing.py that `new-rule` scaffolded has its predicate in `_priced`: a run
    enabling it must call `_priced` on every message, never the compiled loop."""
    from conformance.core.findings import RuleInfo, Severity
    from conformance.formats.canonical import pricing
    from conformance.formats.canonical.engine import MESSAGE

    on = {rid: True for rid in mirror.PRICED_RULES}
    assert mirror.priced_compiles(on)

    def ts499(*_a: Any) -> None:
        return None

    ts499.__module__ = pricing.__name__
    monkeypatch.setattr(
        MESSAGE, "rules", [*MESSAGE.rules, (RuleInfo("TS499", Severity.WARNING, "§6.4", "x"), frozenset(), ts499)]
    )
    assert not mirror.priced_compiles({**on, "TS499": True})
    assert mirror.priced_compiles({**on, "TS499": False})


def _with_tool(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    m = copy.deepcopy(_first("assistant", ("text", "tool_use")))
    m["content"][1].update(name=name, input=tool_input)
    return m


def test_walk_keeps_each_tools_verdict_as_block_ok_gives_it(tmp_path: Path) -> None:
    """With --tools the loop reads a tool's verdict kept by name (`_tool_checks`) once
    `_block_ok` made it: a valid input clears, an invalid one, an unusable input schema
    and an unknown tool each make the message a suspect, on their second meeting too."""
    tools = tmp_path / "tools.json"
    read_file = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools.write_text(
        msgspec.json.encode(
            [
                {
                    "name": "read_file",
                    "description": "d",
                    "side_effects": "read",
                    "input_schema": {**read_file, "additionalProperties": False},
                },
                {
                    "name": "broken",
                    "description": "d",
                    "side_effects": "read",
                    "input_schema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
                },
            ]
        ).decode()
    )
    kinds = [
        ("read_file", {"path": "a"}, False),
        ("read_file", {"nope": 1}, True),
        ("broken", {}, True),
        ("unknown_tool", {}, True),
    ]
    lines = [dumps(_with_tool(name, value)) for name, value, _ in kinds * 2]
    options = Options(tools=tools)
    c, py = _both(options, lines)
    assert c == py
    suspects = c[0][0]
    assert suspects == [k for k, (_n, _v, bad) in enumerate(kinds * 2) if bad]
    fast = FastPath(canonical_run(options))
    for msgs, metas, ats in _batches(fast, lines):
        _module().walk(msgs, metas, ats, set(), fast._walk_context())
    assert set(fast._tool_checks) == {"read_file", "broken"}  # the unknown tool is not kept
    assert fast._tool_checks["broken"] is False
