"""Betamax (Java and Groovy, github.com/betamaxteam/betamax) and OkReplay (Android,
github.com/airbnb/okreplay, Betamax's OkHttp descendant) tapes: YAML under the local tag
`!tape`, `{name, interactions: [{recorded, request, response}]}`, as their `YamlTapeLoader`
and `TapeRepresenter` write them (empty and null fields left out).

A request is `{method, uri, headers, body}`; a response is `{status, headers, body}`, where:

- `status` is the code (`YamlRecordedResponse.status`, an int); a `{code, message}` mapping
  is read too;
- `headers` map a name to one value (several joined with ", ");
- `body` is text (a `text/*` or `application/*` body, `RecordedMessage.maybeBodyAsString`)
  or YAML `!!binary` (any other), which SnakeYAML reads back as the bytes either way;
- Betamax stores an encoded response body as its plain text and keeps `Content-Encoding`
  (robfletcher/betamax issue 3, re-encoded on playback): such a body is read as the text it
  is (`base.undo_coding`).

The `!tape` tag is read as the plain mapping it tags (`recording_files.load_yaml`).
"""

from __future__ import annotations

from typing import Any

from .base import Recorded, RecordingFormat, header_map, mapping, response_status, text_bytes


def detect(doc: Any) -> bool:
    """A tape: `name` and `interactions`, each with its `recorded` time (vcrpy writes
    neither; go-vcr's request has `url`, a tape's `uri`)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list) or "name" not in doc:
        return False
    items = doc["interactions"]
    return not items or (isinstance(items[0], dict) and "recorded" in items[0])


def read(item: Any) -> Recorded:
    it = mapping(item, "the interaction")
    req = mapping(it.get("request"), "`request`")
    resp = mapping(it.get("response"), "`response`")
    return Recorded(
        uri=str(req.get("uri") or ""),
        method=str(req.get("method") or "POST"),
        status=response_status(resp.get("status")),
        request_headers=header_map(req.get("headers"), "`request.headers`"),
        request_body=text_bytes(req.get("body"), "`request.body`"),
        headers=header_map(resp.get("headers"), "`response.headers`"),
        body=text_bytes(resp.get("body"), "`response.body`"),
    )


FORMAT = RecordingFormat(
    "betamax", "Betamax (Java) and OkReplay (Android) tapes, YAML", detect, ("interactions",), read
)
