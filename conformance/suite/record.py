"""Record mode: send an adapter's rendered request to the provider and keep the exchange as a
vcrpy cassette, with credentials and account ids scrubbed before anything is written.

The only place turnspec touches the network, and only when asked (`turnspec wire record`).
The API key comes from the environment; vcrpy's `filter_headers` drops auth and account
headers from the request, `before_record_response` drops account headers and cookies from
the response and masks org/project ids in its body.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import vcr

from ..adapters.base import WireRequest
from ..errors import InputError
from .cassettes import load_cassette


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    key_env: str
    auth: Callable[[str], dict[str, str]]


ENDPOINTS: dict[str, Endpoint] = {
    "anthropic-messages": Endpoint("https://api.anthropic.com", "ANTHROPIC_API_KEY", lambda k: {"x-api-key": k}),
    "openai-chat-completions": Endpoint(
        "https://api.openai.com", "OPENAI_API_KEY", lambda k: {"authorization": f"Bearer {k}"}
    ),
}

SECRET_REQUEST_HEADERS = [
    "authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "x-goog-api-key",
]
SECRET_RESPONSE_HEADERS = {
    "set-cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "cookie",
}
_ACCOUNT_IDS = [
    (re.compile(rb"\borg-[A-Za-z0-9]{6,}"), b"org-REDACTED"),
    (re.compile(rb"\bproj_[A-Za-z0-9]{6,}"), b"proj_REDACTED"),
    (re.compile(rb"\buser-[A-Za-z0-9]{6,}"), b"user-REDACTED"),
]


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {
        k: v for k, v in response.get("headers", {}).items() if k.lower() not in SECRET_RESPONSE_HEADERS
    }
    body = response.get("body", {}).get("string")
    if isinstance(body, bytes):
        for pattern, repl in _ACCOUNT_IDS:
            body = pattern.sub(repl, body)
        response["body"]["string"] = body
    return response


def record(
    request: WireRequest,
    wire_api: str,
    cassette: Path,
    *,
    base_url: str | None = None,
    key_env: str | None = None,
) -> int:
    """Send `request`, append the exchange to `cassette`; returns the HTTP status."""
    ep = ENDPOINTS.get(wire_api)
    if ep is None and (base_url is None or key_env is None):
        raise InputError(f"no endpoint known for wire API {wire_api!r}: pass --base-url and --key-env")
    url = (base_url or (ep.base_url if ep else "")).rstrip("/") + request.path
    env = key_env or (ep.key_env if ep else "")
    key = os.environ.get(env)
    if not key:
        raise InputError(f"record mode needs an API key in ${env}")
    headers = {**request.headers, **(ep.auth(key) if ep else {"authorization": f"Bearer {key}"})}
    recorder = vcr.VCR(
        record_mode="all",
        filter_headers=SECRET_REQUEST_HEADERS,
        before_record_response=scrub_response,
        decode_compressed_response=True,
    )
    req = urllib.request.Request(url, data=json.dumps(request.body).encode(), headers=headers, method=request.method)
    if cassette.exists():
        # appending to something that is not a cassette would make vcrpy rewrite or crash on it
        if not cassette.is_file():
            raise InputError(f"{cassette}: not a regular file")
        existing = load_cassette(cassette)
        if existing.error:
            raise InputError(f"{cassette}: {existing.error}; refusing to append to it")
    try:
        cassette.parent.mkdir(parents=True, exist_ok=True)  # the path the user named for the cassette
        with recorder.use_cassette(str(cassette)):
            try:
                with urllib.request.urlopen(req, timeout=600) as resp:
                    resp.read()
                    return int(resp.status)
            except urllib.error.HTTPError as exc:  # error answers are recorded too (TC801 uses them)
                exc.read()
                return int(exc.code)
    except urllib.error.URLError as exc:
        raise InputError(f"{url}: cannot reach the provider: {exc.reason}") from None
    except (ConnectionError, TimeoutError) as exc:
        raise InputError(f"{url}: cannot reach the provider: {exc.strerror or exc}") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{cassette}: recording failed: {type(exc).__name__}: {exc}") from None
