"""vcrpy (Python) cassettes, YAML (its default serializer) or JSON (its `json` serializer):
`{version: 1, interactions: [{request: {uri, method, body, headers}, response: {status,
headers, body: {string}}}]}`, pydantic-ai's `parsed_body` variant and vcr-but-better's
typed bodies (`body: {type: json|text, content}`, `status: 200`). vcrpy's own loader
reads them (`cassettes.load_cassette`); this declares how they are told from go-vcr's, which
also writes `interactions` but names the request's URL `url`, and from a Betamax tape's
(`name`, and each interaction's `recorded` time).
"""

from __future__ import annotations

from typing import Any

from . import betamax, go_vcr
from .base import RecordingFormat


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and "interactions" in doc and not go_vcr.detect(doc) and not betamax.detect(doc)


FORMAT = RecordingFormat(
    "vcrpy",
    "vcrpy (Python), YAML or JSON, pydantic-ai's parsed_body variant and vcr-but-better's typed bodies",
    detect,
    ("interactions",),
)
