"""`new-wire-api NAME --provider P --docs URL --base-url URL`: the mechanical part of a new
wire API (CONTRIBUTING.md, "Adding an adapter", step 3).

It writes the record's module `conformance/wire/<module>.py` (one frozen `WireApi`: name,
title, docs, request path, framing, stream choice, schema folder, access; nothing the docs
must decide is guessed: carries, probes, stop reasons, errors, endpoint and thinking stay
at their defaults, which claim nothing), the four schemas `schemas/wire/<name>/` (each
citing the docs in `x-sources`, accepting any object until written), its line in
`wire/registry.py: APIS` (last: the least specific path), its public name (docs/public-names.md,
the pin tests/data/public-names.json) and a test file whose test fails until the request
schema refuses a body the docs refuse. What a command cannot write is printed: the record's
facts, the schemas, the cassettes transcribed from the documented examples, an adapter.
"""

from __future__ import annotations

import argparse
import json
import re

from .edit import Plan, Refused, pystr

WIRE = "conformance/wire"
REGISTRY = f"{WIRE}/registry.py"
SCHEMAS = "schemas/wire"
PUBLIC = "docs/public-names.md"
PIN = "tests/data/public-names.json"
KINDS = ("request", "response", "stream-event", "error")
FRAMINGS = {"sse": "SSE", "ndjson": "NDJSON", "json-array": "JSON_ARRAY"}


def _record(a: argparse.Namespace, const: str) -> str:
    docs = f"({pystr(a.docs[0])},)" if len(a.docs) == 1 else "(\n" + "".join(f"    {pystr(u)},\n" for u in a.docs) + ")"
    return f'''"""{a.title}, as data (scaffolded by `python -m conformance.dev new-wire-api`).

Every fact here is written from the provider's documentation (`DOCS`), never from an adapter:
the request path, the framing and how a stream is asked for; then what the wire format can
carry (`Carries`), the probes that locate fields in bodies (`Probes`), the stop-reason map,
the error signals, the endpoint and whether thinking must go back (CONTRIBUTING.md, "Adding
an adapter", step 3). Until they are, the record claims nothing the docs did not say.
"""

from __future__ import annotations

import re

from . import equivalence
from .api import Access, Framing, JsonBody, WireApi

DOCS = {docs}

ACCESS = Access(base_url={pystr(a.base_url)}, key_env={pystr(a.key_env)}, credential_headers=("authorization",))


def _streaming(_url: str, body: JsonBody | None) -> bool:
    """TODO({a.name}): how a request asks for a stream, as the docs say (here: `"stream": true`)."""
    return isinstance(body, dict) and body.get("stream") is True


{const} = WireApi(
    name={pystr(a.name)},
    access=ACCESS,
    title={pystr(a.title)},
    docs=DOCS,
    request_paths=(re.compile({pystr(re.escape(a.path) + "/?$")}),),
    framing=Framing.{FRAMINGS[a.framing]},
    is_streaming=_streaming,
    schema_dir={pystr(a.name)},
    accepted_differences=equivalence.JSON_FORMS,  # object member order, number spellings
)
'''


def _schema(a: argparse.Namespace, kind: str) -> str:
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://turnspec.dev/schemas/wire/{a.name}/{kind}.json",
        "title": f"{a.title} {kind} body",
        "description": f"TODO({a.name}): written from the documentation (x-sources); accepts any object until then.",
        "x-sources": list(a.docs),
        "type": "object",
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _test(a: argparse.Namespace, module: str, const: str) -> str:
    return f'''"""The {a.name} wire record and schemas, checked against the documentation (scaffolded by
`python -m conformance.dev new-wire-api`: write each test from the docs' examples)."""

from __future__ import annotations

from conformance.wire import schemas
from conformance.wire.{module} import {const}


def test_the_request_schema_refuses_a_body_the_docs_refuse() -> None:
    """TODO({a.name}): a request body the documentation refuses (here: an empty object)."""
    validator = schemas.validator({const}, "request")
    assert validator is not None
    why = "schemas/wire/{a.name}/request.json accepts an empty body: write it from the docs"
    assert not validator.is_valid({{}}), why
'''


def _registry(text: str, module: str, const: str) -> str:
    imports = list(re.finditer(r"^from \.(\w+) import .*\n", text, re.M))
    after = [m for m in imports if m.group(1) < module]
    if not imports:
        raise Refused(f"{REGISTRY}: no `from .module import ...` lines")
    at = after[-1].end() if after else imports[0].start()
    text = text[:at] + f"from .{module} import {const}\n" + text[at:]
    start = text.find("APIS: tuple[WireApi, ...] = (\n")
    end = text.find("\n)\n", start)
    if start < 0 or end < 0:
        raise Refused(f"{REGISTRY}: no `APIS: tuple[WireApi, ...] = (` tuple")
    return (
        text[: end + 1]
        + f"    {const},  # TODO: move it before any record whose paths are less specific\n"
        + text[end + 1 :]
    )


def _public(text: str, name: str) -> str:
    head = text.find("## Wire record names")
    end = text.find(".\n", text.find("Shipped:", head))
    if head < 0 or end < 0:
        raise Refused(f"{PUBLIC}: no `Shipped:` list under `## Wire record names`")
    return text[:end] + f", `{name}`" + text[end:]


def _pin(text: str, name: str) -> str:
    pinned = json.loads(text)
    pinned["records"] = sorted({*pinned["records"], name})
    return json.dumps(pinned, indent=2, sort_keys=True) + "\n"


def scaffold_args(a: argparse.Namespace, plan: Plan) -> list[str]:
    """Plan the record, schemas, registry line, public name and test of API `a.name`."""
    if not re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+", a.name):
        raise Refused(f"{a.name!r} is not a wire API name (lower case words joined by `-`: `acme-chat`)")
    from .catalog import wire_names  # the records registered today

    if a.name in wire_names():
        raise Refused(f"a wire record is named {a.name} already")
    if not a.docs or not all(u.startswith("https://") for u in a.docs):
        raise Refused("--docs: the documentation URLs (https://...) the record and its schemas are written from")
    if a.framing not in FRAMINGS:
        raise Refused(f"--framing {a.framing!r}: one of {', '.join(FRAMINGS)} (another framing: CONTRIBUTING step 5)")
    module = a.name.replace("-", "_")
    const = module.upper()
    a.title = a.title or f"TODO({a.name}): the API's name, as its docs give it"
    a.key_env = a.key_env or f"{module.split('_')[0].upper()}_API_KEY"
    plan.create(f"{WIRE}/{module}.py", _record(a, const))
    for kind in KINDS:
        plan.create(f"{SCHEMAS}/{a.name}/{kind}.json", _schema(a, kind))
    plan.edit(REGISTRY, lambda t: _registry(t, module, const))
    plan.edit(PUBLIC, lambda t: _public(t, a.name))
    plan.edit(PIN, lambda t: _pin(t, a.name))
    plan.create(f"tests/test_wire_{module}.py", _test(a, module, const))
    return [
        f"write the record's facts from the docs in {WIRE}/{module}.py: carries, probes, stop_reasons, errors, "
        "endpoint, thinking_back (CONTRIBUTING.md, Adding an adapter, step 3)",
        f"write {SCHEMAS}/{a.name}/*.json from the docs (tests/test_wire_{module}.py fails until the request "
        "schema refuses what they refuse); drop stream-event.json or error.json if the API has none",
        "transcribe the documented examples into cassettes/<adapter>/*.yaml, and write the adapter (steps 1, 2, 4)",
    ]
