"""The generated pydantic models as another repository uses them: typed (PEP 561),
warning-free round trips, and a models-only install that needs only pydantic."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path

import pydantic
import pytest
from turnspec_models.canonical.v1.message import Message

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "conformance" / "data" / "examples" / "session.jsonl"


def test_models_ship_py_typed() -> None:
    import turnspec_models

    assert (Path(turnspec_models.__file__).parent / "py.typed").is_file()


def test_dumping_a_message_with_defaulted_fields_does_not_warn() -> None:
    line = json.loads(EXAMPLE.read_text().splitlines()[2])
    line["metadata"].pop("status", None)  # defaulted by the model
    msg = Message.model_validate(line)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dumped = msg.model_dump(mode="json")
        msg.model_dump_json()
    assert dumped["metadata"]["status"] == "complete"


def test_round_trip_with_exclude_unset_gives_back_the_stored_line() -> None:
    for raw in EXAMPLE.read_text().splitlines()[:20]:
        doc = json.loads(raw)
        back = json.loads(Message.model_validate_json(raw).model_dump_json(exclude_unset=True, by_alias=True))
        assert back == doc


MYPY = shutil.which("mypy", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(MYPY is None, reason="mypy is not installed (pip install -e '.[test]' installs it)")
def test_a_consumer_type_checks_under_mypy_strict_with_narrowing(tmp_path: Path) -> None:
    consumer = tmp_path / "consumer.py"
    consumer.write_text(
        textwrap.dedent(
            """
            from turnspec_models.canonical.v1.message import Message
            from turnspec_models.canonical.v1.text_block import TextBlock
            from turnspec_models.canonical.v1.tool_use_block import ToolUseBlock


            def texts(m: Message) -> list[str]:
                out: list[str] = []
                for block in m.content:
                    # `block` is the union of the block types; isinstance narrows it
                    if isinstance(block, TextBlock):
                        out.append(block.text)
                    elif isinstance(block, ToolUseBlock):
                        out.append(block.name)
                return out


            def bad(m: Message) -> int:
                return m.id  # a str is not an int: mypy must say so
            """
        )
    )
    assert MYPY is not None
    done = subprocess.run(
        [MYPY, "--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), str(consumer)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(lines) == 1 and "consumer.py:19" in lines[0] and "int" in lines[0], done.stdout


def test_the_models_only_distribution_needs_only_pydantic_and_ships_the_generated_package() -> None:
    import tomllib

    meta = tomllib.loads((ROOT / "generated" / "pyproject.toml").read_text())
    assert [d.split(">")[0].split("=")[0].strip() for d in meta["project"]["dependencies"]] == ["pydantic"]
    assert meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["turnspec_models"]
    assert (ROOT / "generated" / "turnspec_models" / "canonical" / "v1" / "message.py").is_file()


def _wheel(project: Path, out: Path) -> zipfile.ZipFile:
    """The wheel pip builds from `project`, offline (hatchling from the [test] extra)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(out), str(project)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    [built] = out.glob("*.whl")
    return zipfile.ZipFile(built)


def _requires(wheel: zipfile.ZipFile) -> list[str]:
    [meta] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    return [
        line.split(":", 1)[1].strip()
        for line in wheel.read(meta).decode().splitlines()
        if line.startswith("Requires-Dist:")
    ]


def test_the_main_wheel_carries_the_models_and_needs_no_other_turnspec_distribution(tmp_path: Path) -> None:
    """Issue 36 (which undoes issue 29's split): `pip install` of turnspec from a git URL, a
    wheel or an sdist resolved no `turnspec-models` (it lives in a subfolder no index serves),
    so the main wheel carries the very package the models-only wheel ships, byte for byte, and
    requires nothing of turnspec's own."""
    main = _wheel(ROOT, tmp_path / "main")
    models = _wheel(ROOT / "generated", tmp_path / "models")
    shipped = {n for n in models.namelist() if n.startswith("turnspec_models/")}
    assert {"turnspec_models/py.typed", "turnspec_models/canonical/v1/message.py"} <= shipped
    assert shipped <= set(main.namelist())
    assert all(main.read(n) == models.read(n) for n in shipped)
    assert not [r for r in _requires(main) if r.startswith("turnspec")]
    assert [r.split(">")[0].split("<")[0].split("=")[0] for r in _requires(models)] == ["pydantic"]
    # what `turnspec rule`, SARIF help and the HTML report read from an installed wheel
    assert {
        "conformance/_ruledocs/traceability.md",
        "conformance/_ruledocs/rules/canonical/valid.jsonl",
        "conformance/_ruledocs/rules/canonical/TS020.jsonl",
        "conformance/_ruledocs/mutants.py.txt",
    } <= set(main.namelist())


def test_a_block_built_in_code_needs_no_type_and_round_trips() -> None:
    from turnspec_models.canonical.v1.text_block import TextBlock
    from turnspec_models.canonical.v1.tool_use_block import ToolUseBlock

    block = TextBlock(text="hi")
    assert block.type == "text"
    dumped = block.model_dump(mode="json")
    assert dumped == {"type": "text", "text": "hi"}
    assert TextBlock.model_validate(dumped) == block
    # read as data, a block still needs its `type`, as the schema says
    with pytest.raises(pydantic.ValidationError, match="Field required") as raised:
        TextBlock.model_validate({"text": "hi"})
    assert [(e["type"], e["loc"]) for e in raised.value.errors()] == [("missing", ("type",))]  # located at the tag
    tool = ToolUseBlock(id="toolu_1", name="f", input={})
    assert tool.model_dump(mode="json")["type"] == "tool_use"
    # inside a message, the dumped block is told apart by its `type` again
    line = json.loads(EXAMPLE.read_text().splitlines()[2])
    msg = Message.model_validate(line)
    msg.content = [block, *msg.content] if isinstance(msg.content, list) else [block]
    again = Message.model_validate(msg.model_dump(mode="json"))
    assert again == Message.model_validate(again.model_dump(mode="json"))
    first = again.content[0] if isinstance(again.content, list) else None
    assert isinstance(first, TextBlock) and first.text == "hi"
