"""An adapter may declare its capabilities as canonical §7.2 writes them: an
`AdapterCapabilities` object (a dataclass, a pydantic model), not only as a mapping.

Failed before: TC001 called `dict()` on the declaration and the checks `.get()`, so an
adapter written from the spec's class stopped `turnspec conform` with a TypeError (TC001)
or an AttributeError, and the runner read its declaration as empty.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import pydantic
import pytest

from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import capabilities_of
from conformance.core.capabilities import CAPABILITY_FIELDS, declared
from conformance.strategies import blocks_for
from conformance.suite.runner import SuiteConfig, run

ROOT = Path(__file__).resolve().parent.parent
CAPS = dict(OpenAIChatAdapter.capabilities)


@dataclasses.dataclass(frozen=True)
class DataclassCapabilities:
    supports_thinking: bool
    supports_images: bool
    supports_tools: bool
    supports_system_prompt: bool
    supports_structured_output: bool
    supports_streaming: bool
    supports_streaming_tool_calls: bool
    supports_parallel_tool_calls: bool
    supports_prompt_caching: bool
    supports_system_messages_in_list: bool
    max_context_tokens: int
    max_output_tokens: int
    accepted_image_media_types: list[str]


class PydanticCapabilities(pydantic.BaseModel):
    supports_thinking: bool
    supports_images: bool
    supports_tools: bool
    supports_system_prompt: bool
    supports_structured_output: bool
    supports_streaming: bool
    supports_streaming_tool_calls: bool
    supports_parallel_tool_calls: bool
    supports_prompt_caching: bool
    supports_system_messages_in_list: bool
    max_context_tokens: int
    max_output_tokens: int
    accepted_image_media_types: list[str]


class WithDataclass(OpenAIChatAdapter):
    capabilities: ClassVar[Any] = DataclassCapabilities(**CAPS)


class WithPydantic(OpenAIChatAdapter):
    capabilities: ClassVar[Any] = PydanticCapabilities(**CAPS)


def test_every_form_reads_as_the_same_declaration() -> None:
    assert set(CAPS) == set(CAPABILITY_FIELDS)  # the reference adapter declares every field
    for form in (DataclassCapabilities(**CAPS), PydanticCapabilities(**CAPS)):
        assert declared(form) == CAPS
        assert blocks_for(form) == blocks_for(CAPS)
    assert capabilities_of(WithDataclass()) == capabilities_of(WithPydantic()) == CAPS
    assert declared(None) == {} and capabilities_of(object()) == {}

    class Hostile:
        @property
        def capabilities(self) -> Any:
            raise RuntimeError("boom")

    assert capabilities_of(Hostile()) == {}  # unreadable: TC001 fails it, nothing crashes


def _results(adapter: OpenAIChatAdapter) -> list[tuple[str, str, int, int, int]]:
    config = SuiteConfig.for_adapter(adapter, cassette_dirs=[ROOT / "cassettes" / "openai-chat"], samples=None)
    return [(r.rule, r.status, r.passed, r.failed, r.skipped) for r in run(config).results]


@pytest.mark.slow
@pytest.mark.parametrize("cls", [WithDataclass, WithPydantic])
def test_conform_gives_an_object_declaration_the_mappings_verdicts(cls: type[OpenAIChatAdapter]) -> None:
    assert _results(cls()) == _results(OpenAIChatAdapter())
