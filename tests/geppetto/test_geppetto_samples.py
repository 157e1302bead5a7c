"""Real geppetto data (../shared/samples/geppetto): it must validate, and our schemas must
agree with geppetto's own spec of kinds and keys (geppetto_codegen.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conformance.api import expand, validate
from conformance.core.findings import Severity
from conformance.core.schemas import schema_set
from conformance.formats.geppetto import GeppettoFormat
from conformance.formats.geppetto.yamlio import Document, read_yaml

pytestmark = pytest.mark.samples


@pytest.fixture
def gep(samples: Path) -> Path:
    return samples / "geppetto"


def turn_files(gep: Path) -> list[Path]:
    files = sorted(gep.glob("*-turn.yaml"))
    assert files, f"no *-turn.yaml in {gep}"
    return files


def load(path: Path) -> object:
    docs = [d for d in read_yaml(path, max_bytes=1 << 26) if isinstance(d, Document)]
    assert len(docs) == 1
    return docs[0].value


def test_every_real_turn_file_validates_by_detection(gep: Path) -> None:
    report = validate([gep])
    errors = [f.format() for f in report.findings if f.severity == Severity.ERROR]
    assert errors == []
    detected = {Path(s.path).name for s in report.files}
    assert {p.name for p in turn_files(gep)} <= detected
    assert "llm-runner-fixtures-simple.yaml" in detected
    assert "geppetto_codegen.yaml" not in detected  # a spec, not a turn
    assert all(s.format == "geppetto" for s in report.files)


def test_the_only_warning_on_real_data_is_the_genuinely_pending_call(gep: Path) -> None:
    report = validate(turn_files(gep), fmt="geppetto")
    assert {(Path(f.path).name, f.rule) for f in report.findings} == {("tool-call-gemini-2.5-flash-turn.yaml", "GE304")}


def test_the_fixture_wrapper_is_recognised_and_its_turn_checked(gep: Path) -> None:
    report = validate([gep / "llm-runner-fixtures-simple.yaml"])
    assert report.findings == []
    assert report.files[0].extra["document"] == "llm-runner fixture"
    assert report.files[0].records == 3  # two seed blocks and one follow-up


def test_detection_is_by_shape(gep: Path) -> None:
    fmt = GeppettoFormat()
    assert all(fmt.detect(p) for p in turn_files(gep))
    assert not fmt.detect(gep / "geppetto_codegen.yaml")
    assert not fmt.detect(gep / "LICENSE")
    assert [f.name for _, f in expand([gep / "plain-text-gemini-3-pro-turn.yaml"])] == ["geppetto"]


def test_schemas_agree_with_geppettos_own_codegen_spec(gep: Path) -> None:
    spec = yaml.safe_load((gep / "geppetto_codegen.yaml").read_text())
    s = schema_set("geppetto", "v1")
    assert {k["value"] for k in spec["block_kinds"]} == set(s["block-kind.json"]["enum"])
    families = spec["key_families"]
    ns = spec["namespace"]

    def keys(family: str) -> set[str]:
        return {f"{ns}.{k['value']}@v1" for k in families[family]}

    assert keys("data") == set(s["turn-data.json"]["properties"])
    assert keys("turn_meta") == set(s["turn-metadata.json"]["properties"])
    assert keys("block_meta") == set(s["block-metadata.json"]["properties"])
    payload = {k["value"] for k in families["payload"]}
    ours: set[str] = set()
    for file in s["block.json"]["discriminator"]["mapping"].values():
        schema = s[file]["properties"]["payload"]
        for branch in schema.get("anyOf", [schema]):
            ours |= set(branch.get("properties", {}))
    # `correlation` is geppetto's toolblocks.PayloadKeyCorrelation, outside the codegen spec
    assert ours - payload == {"correlation"} and payload <= ours


def test_generated_models_accept_every_real_file(gep: Path) -> None:
    from turnspec_models.geppetto.v1.fixture import Fixture
    from turnspec_models.geppetto.v1.turn import Turn

    for path in turn_files(gep):
        turn = Turn.model_validate(load(path))
        assert len(turn.blocks) >= 2
    fixture = Fixture.model_validate(load(gep / "llm-runner-fixtures-simple.yaml"))
    assert fixture.followups is not None and len(fixture.followups) == 1
