"""One violating and one passing case per canonical rule (fixtures in tests/rules/canonical).

Each fixture is `valid.jsonl` with one deliberate defect; the table says where the defect
is (line and JSON pointer), written by hand from the fixture, not from the validator.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance import Options, Selection, validate
from conformance.core.errors import InputError
from conformance.formats.canonical.rules import CATALOG

HERE = Path(__file__).parent / "rules" / "canonical"
TOOLS = HERE / "tools.json"
PRICING = HERE / "pricing.yaml"

# rule -> (fixture, line, pointer, needs) ; needs: "tools" / "pricing" / None
CASES: dict[str, tuple[str, int, str, str | None]] = {
    "TS010": ("TS010.jsonl", 2, "/metadata/trace_id", None),
    "TS011": ("TS011.jsonl", 2, "/content/1", None),
    "TS012": ("TS012.jsonl", 2, "/schema_version", None),
    "TS020": ("TS020.jsonl", 2, "/content/0/text", None),
    "TS101": ("TS101.jsonl", 2, "/content", None),
    "TS102": ("TS102.jsonl", 2, "/content/1", None),
    "TS103": ("TS103.jsonl", 4, "/content", None),
    "TS104": ("TS104.jsonl", 5, "/metadata", None),
    "TS105": ("TS105.jsonl", 5, "/metadata/routing", None),
    "TS106": ("TS106.jsonl", 5, "/metadata/usage", None),
    "TS107": ("TS107.jsonl", 5, "/metadata/routing/chosen_model", None),
    "TS108": ("TS108.jsonl", 5, "/metadata/model", None),
    "TS109": ("TS109.jsonl", 5, "/metadata/provider", None),
    "TS110": ("TS110.jsonl", 4, "/metadata/parent_tool_use_id", None),
    "TS111": ("TS111.jsonl", 4, "/content/0/tool_use_id", None),
    "TS112": ("TS112.jsonl", 3, "/content/2/id", None),
    "TS113": ("TS113.jsonl", 2, "/content/1/media_type", None),
    "TS114": ("TS114.jsonl", 2, "/content/1/source/data", None),
    "TS115": ("TS115.jsonl", 2, "/created_at", None),
    "TS116": ("TS116.jsonl", 2, "/content/1/source/data", None),
    "TS117": ("TS117.jsonl", 2, "/created_at", None),
    "TS118": ("TS118.jsonl", 5, "/metadata/usage/cost_usd", None),
    "TS119": ("TS119.jsonl", 5, "/metadata/status", None),
    "TS120": ("TS120.jsonl", 2, "/content/1/source/data", None),
    "TS201": ("TS201.jsonl", 2, "/id", None),
    "TS202": ("TS202.jsonl", 6, "/id", None),
    "TS203": ("TS203.jsonl", 3, "/id", None),
    "TS204": ("TS204.jsonl", 3, "/created_at", None),
    "TS205": ("TS205.jsonl", 4, "/content/0/tool_use_id", None),
    "TS206": ("TS206.jsonl", 6, "/content/0/tool_use_id", None),
    "TS207": ("TS207.jsonl", 6, "/content/2/id", None),
    "TS208": ("TS208.jsonl", 3, "/content/2", None),
    "TS209": ("TS209.jsonl", 8, "/role", None),
    "TS301": ("TS301.json", 22, "/1/name", None),
    "TS302": ("TS302.json", 22, "/1/name", None),
    "TS303": ("TS303.json", 2, "/0/input_schema/properties/path/oneOf", None),
    "TS304": ("TS304.jsonl", 3, "/content/2/name", "tools"),
    "TS305": ("TS305.jsonl", 3, "/content/2/input/path", "tools"),
    "TS306": ("TS306.jsonl", 3, "/content/2/name", None),
    "TS401": ("TS401.jsonl", 5, "/metadata/usage/cost_usd", "pricing"),
    "TS402": ("TS402.jsonl", 5, "/metadata/usage/pricing_version", "pricing"),
    "TS121": ("TS121.jsonl", 2, "/metadata/user_id", None),
    "TS403": ("TS403.jsonl", 5, "/metadata/model", "pricing"),
    "TS404": ("TS404.jsonl", 5, "/metadata/usage/cached_input_tokens", "pricing"),
}


def run(path: Path, needs: str | None, **sel: object) -> list[tuple[str, int | None, str]]:
    opts = Options(
        selection=Selection(**sel),  # type: ignore[arg-type]
        tools=TOOLS if needs == "tools" else None,
        pricing=PRICING if needs == "pricing" else None,
    )
    return [(f.rule, f.line, f.pointer) for f in validate([path], opts).findings]


@pytest.mark.parametrize("rule", list(CASES))
def test_rule_fires_at_the_defect(rule: str) -> None:
    fixture, line, pointer, needs = CASES[rule]
    found = run(HERE / fixture, needs)
    assert (rule, line, pointer) in found, found


@pytest.mark.parametrize("rule", list(CASES))
def test_rule_passes_on_valid_input(rule: str) -> None:
    _, _, _, needs = CASES[rule]
    assert run(HERE / "valid.jsonl", needs) == []


@pytest.mark.parametrize("rule", list(CASES))
def test_ignore_silences_only_that_rule(rule: str) -> None:
    fixture, _, _, needs = CASES[rule]
    found = run(HERE / fixture, needs, ignore=(rule,))
    assert all(r != rule for r, _, _ in found)


def test_every_rule_of_the_catalog_has_a_case() -> None:
    io_rules = {r.id for r in CATALOG if r.id < "TS010"}  # covered in test_jsonio.py
    conversion = {"TS900"}  # emitted by conversions, covered in test_convert.py
    assert {r.id for r in CATALOG} - io_rules - conversion == set(CASES)


def test_strict_turns_tolerated_unknowns_into_errors() -> None:
    opts = Options(selection=Selection(strict=True))
    report = validate([HERE / "TS011.jsonl"], opts)
    assert [f.severity for f in report.findings if f.rule == "TS011"] == ["error"]
    assert report.exit_code == 1
    relaxed = validate([HERE / "TS011.jsonl"])
    assert relaxed.exit_code == 0 and relaxed.warnings == 1


def test_partial_messages_skip_message_invariants() -> None:
    # TS101 fixture with status partial: an empty streaming message is allowed (§5.1.5)
    import json

    lines = (HERE / "TS101.jsonl").read_text().splitlines()
    msg = json.loads(lines[1])
    msg["metadata"]["status"] = "partial"
    lines[1] = json.dumps(msg)
    path = HERE.parent.parent / ".tmp_partial.jsonl"
    try:
        path.write_text("\n".join(lines) + "\n")
        assert [r for r, _, _ in run(path, None)] == []
    finally:
        path.unlink()


def test_invalid_tool_definition_is_a_schema_error(tmp_path: Path) -> None:
    import json

    tools = json.loads(TOOLS.read_text())
    del tools[1]["side_effects"]
    p = tmp_path / "tools.json"
    p.write_text(json.dumps(tools, indent=2))
    assert [(f.rule, f.pointer) for f in validate([p]).findings] == [("TS020", "/1/side_effects")]


@pytest.mark.parametrize(
    ("cost", "ok"),
    [
        ("0.000654", True),  # exact: 8 x $3/M + 42 x $15/M
        ("0.00065400", True),  # the same number with trailing zeros
        # Issue 16 reversed the old "half a unit at the stored precision" tolerance: §6.4
        # has the core compute the cost from the table, so it is the table's exact value
        ("0.00065", False),
        ("0.0007", False),
        ("0.001", False),
        ("0.00066", False),
        ("0.0006", False),
        ("0.000", False),
    ],
)
def test_cost_is_checked_at_the_tables_precision(tmp_path: Path, cost: str, ok: bool) -> None:
    import json

    lines = (HERE / "valid.jsonl").read_text().splitlines()
    msg = json.loads(lines[4])
    msg["metadata"]["usage"]["cost_usd"] = cost
    lines[4] = json.dumps(msg)
    p = tmp_path / "cost.jsonl"
    p.write_text("\n".join(lines) + "\n")
    found = [r for r, _, _ in run(p, "pricing")]
    assert ("TS401" not in found) is ok, found


def test_zero_for_a_fraction_of_a_dollar_fails() -> None:
    # 125,000 input tokens at $3/M is $0.375; "0" passed under the old tolerance
    found = run(HERE / "TS401-precision.jsonl", "pricing")
    assert ("TS401", 5, "/metadata/usage/cost_usd") in found


@pytest.mark.parametrize(
    ("written", "ok"),
    [
        ("0.000654", True),  # a JSON number, read exactly
        ("6.54e-4", True),  # exponent form
        ("654E-6", True),
        ('"6.54e-4"', True),  # exponent form in a string
        # differs from the exact cost by 1e-23, but is the same binary float: only an
        # exact reading (never through float) sees the difference
        ("0.00065400000000000000001", False),
    ],
)
def test_cost_usd_numbers_are_read_exactly_and_only_warned(tmp_path: Path, written: str, ok: bool) -> None:
    lines = (HERE / "valid.jsonl").read_text().splitlines()
    lines[4] = lines[4].replace('"cost_usd": "0.000654"', f'"cost_usd": {written}')
    assert written in lines[4]
    p = tmp_path / "cost.jsonl"
    p.write_text("\n".join(lines) + "\n")
    report = validate([p], Options(pricing=PRICING))
    rules = {(f.rule, f.severity) for f in report.findings}
    assert ("TS118", "warning") in rules
    assert ("TS401" not in {r for r, _ in rules}) is ok, rules
    assert report.exit_code == (0 if ok else 1)
    # §4.3 types it a Decimal: text that is no decimal number is a schema error (TS020)
    p.write_text("\n".join(lines).replace(f'"cost_usd": {written}', '"cost_usd": "cheap"') + "\n")
    found = {(f.rule, f.pointer) for f in validate([p], Options(pricing=PRICING)).findings}
    assert ("TS020", "/metadata/usage/cost_usd") in found, found


def test_every_rule_the_code_can_emit_is_listed_by_turnspec_rules() -> None:
    """Scan the package for rule ids (literals and `RuleInfo` values) and ask the CLI.

    A rule is emitted either through its `RuleInfo` or by its id string; both are found
    here, so a rule defined outside every catalogue (TS900 once was) fails this test.
    """
    import importlib
    import json
    import pkgutil
    import re

    from typer.testing import CliRunner

    import conformance
    from conformance.cli import app
    from conformance.core.findings import RuleInfo

    root = Path(conformance.__file__).parent
    ids: dict[str, str] = {}
    literal = re.compile(r"""["']((?:TS|TC|TM|GP|GE|CH|TW)\d{3})["']""")
    for py in sorted(root.rglob("*.py")):
        for m in literal.finditer(py.read_text(encoding="utf-8")):
            ids.setdefault(m.group(1), str(py.relative_to(root)))
    for mod in pkgutil.walk_packages([str(root)], "conformance."):
        module = importlib.import_module(mod.name)
        for value in vars(module).values():
            if isinstance(value, RuleInfo):
                ids.setdefault(value.id, mod.name)
    assert len(ids) > 100  # the scan found the catalogues, not nothing
    result = CliRunner().invoke(app, ["rules", "--output", "json"])
    assert result.exit_code == 0, result.output
    listed = {r["id"] for r in json.loads(result.stdout)}
    missing = {i: where for i, where in ids.items() if i not in listed}
    assert not missing, f"emitted but not listed by `turnspec rules`: {missing}"


def test_every_rule_is_declared_once() -> None:
    """Each rule id is built (`RuleInfo("TS900", ...)`, or a subclass such as `CheckInfo`)
    in one place of the package; every other module reads that value. Failed before: TS900
    was declared both in `core/convertkit.py` and in `formats/canonical/rules.py`."""
    import ast

    import conformance

    root = Path(conformance.__file__).parent
    where: dict[str, list[str]] = {}
    for py in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
                continue
            first = node.args[0]
            if node.func.id.endswith("Info") and isinstance(first, ast.Constant) and isinstance(first.value, str):
                where.setdefault(first.value, []).append(f"{py.relative_to(root)}:{node.lineno}")
    assert len(where) > 100  # the scan found the catalogues, not nothing
    twice = {rid: places for rid, places in where.items() if len(places) > 1}
    assert not twice, f"declared more than once: {twice}"


def test_every_registered_rule_function_is_in_the_catalogue() -> None:
    from conformance.formats.canonical.engine import registered_rules

    assert registered_rules() <= {r.id for r in CATALOG}
    # every canonical rule except reader, schema and version rules has a function
    driver_rules = {"TS012", "TS020", "TS900"}
    assert {r.id for r in CATALOG if r.id >= "TS010"} - driver_rules == registered_rules()


def test_unselected_rules_are_not_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    """--select skips the work of every other rule, not just its finding."""
    from conformance.formats.canonical import engine

    called: list[str] = []
    for fam in engine.FAMILIES:
        wrapped = []
        for info, blocks, fn in fam.rules:

            def spy(*a: object, _fn: object = fn, _id: str = info.id) -> None:
                called.append(_id)
                _fn(*a)  # type: ignore[operator]

            wrapped.append((info, blocks, spy))
        monkeypatch.setattr(fam, "rules", wrapped)
    found = run(HERE / "TS103.jsonl", "pricing", select=("TS103",))
    assert [r for r, _, _ in found] == ["TS103"]
    assert set(called) == {"TS103"}
    called.clear()
    run(HERE / "TS103.jsonl", "pricing", ignore=("TS1", "TS4"))
    assert called and not any(c.startswith(("TS1", "TS4")) for c in called)


# -- hostile side files and values (issue 9) ------------------------------------------

_RATES = 'pricing_version: "2026-05-08"\nmodels:\n  anthropic:claude-sonnet-4-6:\n    input_per_mtok_usd: {v}\n    output_per_mtok_usd: 15.00\n'


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        (_RATES.format(v=".nan"), 4, "not a finite number"),
        (_RATES.format(v=".inf"), 4, "not a finite number"),
        (_RATES.format(v="-.Inf"), 4, "not a finite number"),
        (_RATES.format(v="190:20:30.15"), None, "/models/anthropic:claude-sonnet-4-6/input_per_mtok_usd"),
        (_RATES.format(v="1e999999999"), None, "not a finite decimal between"),
        (_RATES + "    input_per_mtok_usd: 4\n", 6, "duplicate key 'input_per_mtok_usd'"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdefg", "bcdefgh", strict=True)),
            None,
            "aliases expand to more than",
        ),
        ("x: [" * 300 + "]" * 300, None, "nested deeper than"),
        ("pricing_version: [unclosed\n", 2, "not valid YAML"),
    ],
)
def test_hostile_pricing_yaml_is_one_located_line(tmp_path: Path, text: str, line: int | None, says: str) -> None:
    from conformance.cli import main

    p = tmp_path / "p.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        validate([HERE / "valid.jsonl"], Options(pricing=p))
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(str(p)) and says in msg, msg
    if line is not None:
        assert msg.startswith(f"{p}:{line}: "), msg
    assert main(["validate", "--pricing", str(p), str(HERE / "valid.jsonl")]) == 2


def test_pricing_json_out_of_range_and_duplicates_are_located(tmp_path: Path) -> None:
    p = tmp_path / "p.json"
    rates = '"input_per_mtok_usd": 1e999999999, "output_per_mtok_usd": 1'
    p.write_text('{"pricing_version": "v", "models": {"a:b": {' + rates + "}}}")
    with pytest.raises(InputError, match=r"/models/a:b/input_per_mtok_usd: rate"):
        validate([HERE / "valid.jsonl"], Options(pricing=p))
    p.write_text('{"pricing_version": "v", "pricing_version": "w", "models": {}}')
    with pytest.raises(InputError, match="duplicate key"):
        validate([HERE / "valid.jsonl"], Options(pricing=p))


def test_yaml_rates_are_exact_decimals_never_floats() -> None:
    from decimal import Decimal

    from conformance.formats.canonical.pricing import load_price_table

    table = load_price_table(PRICING)
    rates = table.versions["2026-05-08"]["anthropic:claude-sonnet-4-6"]
    assert rates["cached_read_per_mtok_usd"] == Decimal("0.30")
    assert all(type(r) is Decimal for r in rates.values())
    # 0.1 + 0.2 style: exact in Decimal, off in binary floating point
    usage = {"input_tokens": 1, "output_tokens": 0, "cached_input_tokens": 2}
    assert table.cost("2026-05-08", "anthropic:claude-sonnet-4-6", usage) == Decimal("0.0000036")


@pytest.mark.parametrize("kind", ["fifo", "dir", "dev"])
@pytest.mark.parametrize("flag", ["pricing", "tools"])
def test_side_files_that_are_not_regular_files_are_refused(tmp_path: Path, kind: str, flag: str) -> None:
    import os

    if kind == "fifo":
        target = tmp_path / f"side.{'yaml' if flag == 'pricing' else 'json'}"
        os.mkfifo(target)
    elif kind == "dir":
        target = tmp_path / "side.json"
        target.mkdir()
    else:
        target = Path("/dev/zero")
        if not target.exists():
            pytest.skip("no /dev/zero on this system")
    with pytest.raises(InputError, match=r"not a regular file|is a directory"):
        validate([HERE / "valid.jsonl"], Options(**{flag: target}))  # type: ignore[arg-type]


def test_huge_token_counts_never_crash(tmp_path: Path) -> None:
    import json

    lines = (HERE / "valid.jsonl").read_text().splitlines()
    msg = json.loads(lines[2])
    msg["metadata"]["usage"]["input_tokens"] = 10**400
    lines[2] = json.dumps(msg)
    p = tmp_path / "big.jsonl"
    p.write_text("\n".join(lines) + "\n")
    found = validate([p], Options(pricing=PRICING)).findings
    assert [(f.rule, f.line) for f in found] == [("TS401", 3)]
    # 10**400 x $3/M + 42 x $15/M, exactly (a 28-digit context would round the cents away)
    assert "3" + "0" * 394 + ".00063 " in found[0].message


@pytest.mark.parametrize("depth", [300, 600, 1000])
def test_deep_json_never_hits_a_recursion_limit(tmp_path: Path, depth: int) -> None:
    import json

    lines = (HERE / "valid.jsonl").read_text().splitlines()
    deep = '{"a":' * depth + "1" + "}" * depth
    lines[2] = lines[2].replace('"metadata": {', '"metadata": {"provider_raw": ' + deep + ", ", 1)
    p = tmp_path / "deep.jsonl"
    p.write_text("\n".join(lines) + "\n")
    found = validate([p]).findings
    assert ("TS008", 3) in [(f.rule, f.line) for f in found]
    schema = '{"type": "object", "properties": {"a": ' * depth + "{}" + "}}" * depth
    tools = json.loads(TOOLS.read_text())
    t = tmp_path / "tools.json"
    t.write_text(json.dumps(tools)[:-1] + ', {"name": "deep", "description": "d", "side_effects": "none", '
                 f'"input_schema": {schema}}}]')  # fmt: skip
    assert "TS008" in {f.rule for f in validate([t]).findings}
    with pytest.raises(InputError, match="nested deeper"):
        validate([HERE / "valid.jsonl"], Options(tools=t))


def test_deep_but_parseable_tool_schemas_are_walked_iteratively() -> None:
    import sys

    from conformance.formats.canonical.tools import subset_violations

    schema: dict[str, object] = {"oneOf": []}
    for _ in range(sys.getrecursionlimit() * 2):
        schema = {"type": "object", "properties": {"a": schema}}
    found = list(subset_violations(schema))
    assert len(found) == 1 and found[0][0].endswith("/properties/a/oneOf")


# -- issue 16: what the specs allow passes (warnings at most) ---------------------------


def _session(tmp_path: Path, edit: Callable[[list[dict[str, Any]]], object]) -> Path:
    import json

    msgs = [json.loads(x) for x in (HERE / "valid.jsonl").read_text().splitlines()]
    edit(msgs)
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    return p


def _cancel_empty_assistant(msgs: list[dict[str, Any]]) -> None:
    msgs[4]["content"] = []
    msgs[4]["metadata"]["status"] = "cancelled"


def _cancel_tool_use_with_empty_input(msgs: list[dict[str, Any]]) -> None:
    # contract §5.3.3: a cancelled tool call closes with `{}` input; no result follows
    msgs[2]["metadata"]["status"] = "cancelled"
    msgs[2]["content"][2]["input"] = {}
    del msgs[3:]


def _errored_tool_message(msgs: list[dict[str, Any]]) -> None:
    msgs[3]["metadata"]["status"] = "error"
    msgs[3]["content"].append(dict(msgs[3]["content"][0]))


def _unknown_block_beside_tool_result(msgs: list[dict[str, Any]]) -> None:
    msgs[3]["content"].append({"type": "citation", "source": "README.md"})


def _fields_everywhere(msgs: list[dict[str, Any]]) -> None:
    msgs[1]["trace"] = "t1"
    msgs[1]["content"][0]["cache_control"] = {"type": "ephemeral"}
    msgs[3]["content"][0]["content"][0]["annotations"] = []
    msgs[4]["metadata"]["usage"]["reasoning_tokens"] = 3
    msgs[4]["metadata"]["routing"]["latency_budget_ms"] = 50
    msgs[4]["metadata"]["team_tags"] = {"any": {"depth": 1}}


def _created_at_backwards(msgs: list[dict[str, Any]]) -> None:
    msgs[2]["created_at"] = "2026-05-08T11:00:00.000000Z"


def _upper_case_media_type(msgs: list[dict[str, Any]]) -> None:
    msgs[1]["content"].append(
        {"type": "image", "media_type": "image/PNG", "source": {"kind": "url", "data": "https://x.test/a.png"}}
    )


@pytest.mark.parametrize(
    ("edit", "warnings"),
    [
        (_cancel_empty_assistant, set()),
        (_cancel_tool_use_with_empty_input, set()),
        (_errored_tool_message, set()),
        (_unknown_block_beside_tool_result, {"TS011"}),
        (_fields_everywhere, {"TS010"}),
        (_created_at_backwards, {"TS204"}),
        (_upper_case_media_type, set()),
    ],
)
def test_what_the_spec_allows_passes(
    tmp_path: Path, edit: Callable[[list[dict[str, Any]]], None], warnings: set[str]
) -> None:
    p = _session(tmp_path, edit)
    report = validate([p], Options(tools=TOOLS))
    assert report.exit_code == 0, [f.format() for f in report.findings]
    assert {f.rule for f in report.findings} == warnings
    assert all(f.severity == "warning" for f in report.findings)


def test_unknown_fields_are_located_wherever_they_are(tmp_path: Path) -> None:
    p = _session(tmp_path, _fields_everywhere)
    assert sorted((f.line, f.pointer) for f in validate([p]).findings) == [
        (2, "/content/0/cache_control"),
        (2, "/trace"),
        (4, "/content/0/content/0/annotations"),
        (5, "/metadata/routing/latency_budget_ms"),
        (5, "/metadata/team_tags"),
        (5, "/metadata/usage/reasoning_tokens"),
    ]


@pytest.mark.parametrize(
    ("created_at", "canonical"),
    [
        ("2026-05-08T12:00:02.000000Z", True),
        ("2026-05-08T12:00:02Z", False),
        ("2026-05-08T12:00:02.5Z", False),
        ("2026-05-08T12:00:02.123+00:00", False),
        ("2026-05-08T12:00:02.123456+00:00", False),  # datetime.isoformat() of an aware UTC time
        ("2026-05-08T12:00:02+00:00", False),
    ],
)
def test_any_rfc3339_utc_created_at_is_valid(tmp_path: Path, created_at: str, canonical: bool) -> None:
    def edit(msgs: list[dict[str, Any]]) -> None:
        msgs[1]["created_at"] = created_at

    report = validate([_session(tmp_path, edit)])
    assert report.exit_code == 0
    assert [f.rule for f in report.findings] == ([] if canonical else ["TS117"])
    strict = validate([_session(tmp_path, edit)], Options(selection=Selection(strict=True)))
    assert strict.exit_code == (0 if canonical else 1)


@pytest.mark.parametrize(("created_at", "rule"), [
    ("2026-05-08T12:00:02.1234567Z", "TS020"), ("2026-05-08T12:00:02.000000+01:00", "TS020"),
    ("2026-05-08 12:00:02Z", "TS020"), ("2026-05-08T12:00:02.000000Z\n", "TS020"),
    ("2026-02-30T12:00:02.000000Z", "TS115"), ("2025-02-29T12:00:02.000000Z", "TS115"),  # the form, no real date
])  # fmt: skip
def test_created_at_that_is_not_rfc3339_utc_up_to_microseconds_fails(
    tmp_path: Path, created_at: str, rule: str
) -> None:
    def edit(msgs: list[dict[str, Any]]) -> None:
        msgs[1]["created_at"] = created_at

    assert [(f.rule, f.pointer) for f in validate([_session(tmp_path, edit)]).findings] == [(rule, "/created_at")]


def test_created_at_backwards_compares_instants_not_text(tmp_path: Path) -> None:
    def edit(msgs: list[dict[str, Any]]) -> None:
        msgs[1]["created_at"] = "2026-05-08T12:00:02+00:00"  # later than :01.000000Z, earlier as text? no: same
        msgs[2]["created_at"] = "2026-05-08T12:00:02.5Z"  # textually smaller than "...02+00:00"

    assert "TS204" not in {f.rule for f in validate([_session(tmp_path, edit)]).findings}


def test_cached_tokens_without_a_cached_rate_are_a_warning_not_an_error() -> None:
    report = validate([HERE / "TS404.jsonl"], Options(pricing=PRICING))
    assert {(f.rule, f.severity) for f in report.findings} == {("TS404", "warning")}
    assert report.exit_code == 0


def test_stop_reason_cancelled_with_status_cancelled_passes(tmp_path: Path) -> None:
    def edit(msgs: list[dict[str, Any]]) -> None:
        msgs[4]["metadata"]["stop_reason"] = "cancelled"
        msgs[4]["metadata"]["status"] = "cancelled"

    assert [f.rule for f in validate([_session(tmp_path, edit)]).findings] == ["TS010"]  # v1: unknown field


# -- issue 16: checkable statements, enforced ----------------------------------------


def test_tool_schema_subset_is_an_allow_list() -> None:
    found = {(f.rule, f.pointer) for f in validate([HERE / "TS303-allow-list.json"]).findings}
    assert found == {
        ("TS303", "/0/input_schema/properties/path/pattern"),
        ("TS303", "/1/input_schema/properties/mode/const"),
        ("TS303", "/1/input_schema/properties/pair/prefixItems"),
        ("TS303", "/1/input_schema/properties/opts/dependentSchemas"),
        ("TS303", "/1/input_schema/properties/rest/unevaluatedProperties"),
        ("TS303", "/1/input_schema/properties/tuple/items"),
        ("TS303", "/1/input_schema/properties/tuple/items/0/unevaluatedProperties"),
    }


def test_allowed_schema_constructs_pass() -> None:
    from conformance.formats.canonical.tools import subset_violations

    ok = {
        "type": "object",
        "title": "Args",
        "description": "d",
        "properties": {
            "when": {"type": "string", "format": "date-time", "default": "now"},
            "n": {"type": ["integer", "null"], "enum": [1, 2, None]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["when"],
        "additionalProperties": False,
    }
    assert list(subset_violations(ok)) == []
    assert [p for p, _ in subset_violations({"type": "object", "properties": {"a": {"type": "date"}}})] == [
        "/properties/a/type"
    ]


@pytest.mark.parametrize(("name", "ok"), [("read_file", True), ("functions.ReadFile", False), ("ReadFile", False),
                                          ("mcp:read_file", False), ("read-file", False)])  # fmt: skip
def test_tool_use_names_are_canonical_without_tools(tmp_path: Path, name: str, ok: bool) -> None:
    def edit(msgs: list[dict[str, Any]]) -> None:
        msgs[2]["content"][2]["name"] = name

    found = [(f.rule, f.pointer) for f in validate([_session(tmp_path, edit)]).findings]
    assert (found == []) is ok, found
    if not ok:
        assert found == [("TS306", "/content/2/name")]


def test_failed_tool_call_without_result_message_passes_ts507(tmp_path: Path) -> None:
    """A `failed` tool call may have no result message (issue 16); `pending` is still
    what a store says of a call the messages never answered."""
    import sqlite3

    from conformance.convert import convert

    db = tmp_path / "store.db"
    assert convert("canonical", "sqlite", HERE / "valid.jsonl", db) == []
    con = sqlite3.connect(db)
    con.execute("DELETE FROM messages WHERE id = '01JZ0000000000000000000004'")
    con.execute("UPDATE tool_calls SET status = 'failed', result_message_id = NULL")
    con.commit()
    con.close()
    rules = {(f.rule, f.severity) for f in validate([db]).findings}
    assert ("TS507", "error") not in rules and ("TS208", "warning") in rules
    con = sqlite3.connect(db)
    con.execute("UPDATE tool_calls SET status = 'succeeded'")
    con.commit()
    con.close()
    assert "TS507" in {f.rule for f in validate([db]).findings}


def test_rule_modules_do_not_import_the_run() -> None:
    """Issue 10: rules never reach the run (no checker <-> pricing/tools cycle, not even
    under TYPE_CHECKING), and no rule calls a private helper of it."""
    import ast

    import conformance.formats.canonical as pkg

    root = Path(pkg.__file__).parent
    for name in ("engine.py", "invariants.py", "tools.py", "pricing.py", "rules.py", "files.py"):
        text = (root / name).read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom):
                assert node.module not in ("checker", "formats.canonical.checker"), (name, node.module)
                assert not (node.level and node.module == "checker"), name
        assert "run._f" not in text and 'on["' not in text, name


@pytest.mark.parametrize(
    ("data", "ok"),
    [
        ("https://example.com/a.png", True),
        ("http://x.test/a%20b.png?q=1#f", True),
        ("gs://bucket/cat.png", True),
        ("s3://bucket/key", True),
        ("data:image/png;base64,iVBORw0KGgo=", True),
        ("HTTPS://EXAMPLE.COM/ünïcode.png", True),
        ("images/cat.png", False),
        ("//cdn.example.com/a.png", False),
        ("https:", False),
        ("https://x.test/a b.png", False),
        ("https://x.test/a.png\n", False),
        ("1http://x.test/a.png", False),
    ],
)
def test_url_data_is_an_absolute_url(tmp_path: Path, data: str, ok: bool) -> None:
    """TS120 (§4.2: url `data` is a URL) on both paths: accepted forms stay silent, the
    rest is reported at the source's data."""
    from conformance.formats.canonical.invariants import url_ok

    assert url_ok(data) is ok
    lines = (HERE / "TS120.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"images/cat.png"', json.dumps(data))
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for exact in (False, True):
        hits = [(f.rule, f.line, f.pointer) for f in validate([p], Options(exact=exact)).findings if f.rule == "TS120"]
        assert hits == ([] if ok else [("TS120", 2, "/content/1/source/data")]), (data, exact)


# -- TS020, statement by statement: each schema statement of the table, broken once -------

_VALID = [json.loads(line) for line in (HERE / "valid.jsonl").read_text(encoding="utf-8").splitlines()]
_TOOL_DEFS = json.loads(TOOLS.read_text(encoding="utf-8"))


def _set(index: int, path: str, value: Any) -> Callable[[list[Any]], None]:
    """An edit of message `index`: `path` is /-separated keys and list indexes; a value of
    `...` deletes the key."""

    def edit(msgs: list[Any]) -> None:
        *parents, last = path.split("/")
        node = msgs[index]
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if value is ...:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return edit


_IMAGE = {"type": "image", "media_type": "image/png", "source": {"kind": "ftp", "data": "x.png"}}
SCHEMA_STATEMENTS: dict[str, tuple[Callable[[list[Any]], None], str]] = {
    # ref in docs/traceability.md -> (the break, the pointer TS020 names; a missing field: where it belongs)
    "C05-role": (_set(1, "role", "robot"), "/1/role"),
    "C06-created_at-missing": (_set(1, "created_at", ...), "/1/created_at"),
    "C09-schema_version-string": (_set(1, "schema_version", "1"), "/1/schema_version"),
    "C10-text-block-without-text": (_set(1, "content/0", {"type": "text"}), "/1/content/0/text"),
    "C15-tool_result-content-not-a-list": (_set(3, "content/0/content", "# Project Foo"), "/3/content/0/content"),
    "C15-is_error-not-a-bool": (_set(3, "content/0/is_error", "yes"), "/3/content/0/is_error"),
    "C18-source-kind": (_set(1, "content/0", _IMAGE), "/1/content/0/source/kind"),
    "C22-signature-not-a-string": (_set(2, "content/0/signature", 5), "/2/content/0/signature"),
    "C22-redacted-data-not-a-string": (
        _set(2, "content/0", {"type": "redacted_thinking", "data": 5}),
        "/2/content/0/data",
    ),
    "C31-routing-mode": (_set(2, "metadata/routing/mode", "random"), "/2/metadata/routing/mode"),
    "C31-routing-confidence": (_set(2, "metadata/routing/confidence", 1.5), "/2/metadata/routing/confidence"),
    "C31-routing-reason": (_set(2, "metadata/routing/reason", 7), "/2/metadata/routing/reason"),
    "C32-negative-tokens": (_set(2, "metadata/usage/input_tokens", -1), "/2/metadata/usage/input_tokens"),
    "C32-fractional-tokens": (_set(2, "metadata/usage/output_tokens", 4.5), "/2/metadata/usage/output_tokens"),
    "C32-pricing_version-missing": (
        _set(2, "metadata/usage/pricing_version", ...),
        "/2/metadata/usage/pricing_version",
    ),
    "C32-latency_ms-missing": (_set(2, "metadata/usage/latency_ms", ...), "/2/metadata/usage/latency_ms"),
    "C33-cost_usd-not-a-decimal": (_set(2, "metadata/usage/cost_usd", "cheap"), "/2/metadata/usage/cost_usd"),
    "C35-status": (_set(2, "metadata/status", "done"), "/2/metadata/status"),
    "C36-provider_raw-not-an-object": (_set(2, "metadata/provider_raw", 5), "/2/metadata/provider_raw"),
    "C36-user_id-not-a-string": (_set(1, "metadata/user_id", 5), "/1/metadata/user_id"),
    "C36-team_id-not-a-string": (_set(1, "metadata/team_id", []), "/1/metadata/team_id"),
}


@pytest.mark.parametrize("case", list(SCHEMA_STATEMENTS))
def test_each_schema_statement_broken_is_ts020_at_its_field(case: str) -> None:
    """The registered TS020 (through the validator, not the schema engine alone) reports each
    statement of canonical §4 the schema carries, where it is broken."""
    from conformance.formats.canonical.memory import validate_messages  # the in-memory entry point

    edit, pointer = SCHEMA_STATEMENTS[case]
    msgs = json.loads(json.dumps(_VALID))
    assert not [f for f in validate_messages(msgs) if f.rule == "TS020"]
    edit(msgs)
    found = [f.pointer for f in validate_messages(msgs) if f.rule == "TS020"]
    assert pointer in found, (case, found)


@pytest.mark.parametrize(
    ("field", "value"),
    [("side_effects", "maybe"), ("side_effects", None), ("requires_workspace", "yes"), ("description", 3), ("name", 7)],
)
def test_tool_definition_fields_are_ts020_at_the_field(field: str, value: Any) -> None:
    """Canonical §4.4's ToolDefinition: `side_effects` is one of its enum (required),
    `requires_workspace` a bool; each broken field is a TS020 error at that field."""
    from conformance.formats.canonical.memory import validate_messages  # the in-memory entry point

    tool = json.loads(json.dumps(_TOOL_DEFS[1]))
    tool[field] = value
    found = [(f.rule, f.pointer) for f in validate_messages([tool])]
    assert ("TS020", f"/0/{field}") in found, found


@pytest.mark.parametrize(
    "construct",
    [
        {"$ref": "#/$defs/x"},
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        {"allOf": [{"type": "string"}]},
        {"not": {"type": "string"}},
        {"if": {"type": "string"}, "then": {"minLength": 1}, "else": {"type": "integer"}},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
    ],
    ids=["$ref", "oneOf", "anyOf", "allOf", "not", "if-then-else", "patternProperties", "additionalProperties-schema"],
)
def test_each_construct_section_5_4_disallows_is_ts303(construct: dict[str, Any]) -> None:
    """Canonical §5.4 lists eight disallowed constructs; each one, nested in a property of an
    otherwise allowed input_schema, is a TS303 error (the allow-list may not let one through)."""
    from conformance.formats.canonical.memory import validate_messages  # the in-memory entry point

    tool = json.loads(json.dumps(_TOOL_DEFS[0]))
    tool["input_schema"]["properties"]["limit"] = construct
    found = [(f.rule, f.severity) for f in validate_messages([tool])]
    assert ("TS303", "error") in found, found
    tool["input_schema"]["properties"]["limit"] = {"type": "integer"}
    assert validate_messages([tool]) == []
