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
from pathlib import Path
from typing import Any

import vcr

from ..adapters.base import WireRequest
from ..core.errors import InputError
from ..wire import recording_files, registry
from ..wire.cassette_lint import account_headers, credential_headers
from .cassettes import load_cassette


def secret_request_headers() -> list[str]:
    """What vcrpy's `filter_headers` drops from a recorded request: every credential and
    account header `turnspec cassettes lint` knows (each API's record, and HTTP's own)."""
    return sorted(credential_headers() | account_headers() | {"cookie"})


def secret_response_headers() -> frozenset[str]:
    """What `scrub_response` drops from a recorded response: account ids and cookies."""
    return account_headers() | {"set-cookie", "cookie"}


_ACCOUNT_IDS = [
    (re.compile(rb"\borg-[A-Za-z0-9]{6,}"), b"org-REDACTED"),
    (re.compile(rb"\bproj_[A-Za-z0-9]{6,}"), b"proj_REDACTED"),
    (re.compile(rb"\buser-[A-Za-z0-9]{6,}"), b"user-REDACTED"),
]


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    secret = secret_response_headers()
    response["headers"] = {k: v for k, v in response.get("headers", {}).items() if k.lower() not in secret}
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
    access = next((a.access for a in registry.APIS if a.name == wire_api), None)
    root = base_url or (access.base_url if access else None)
    if root is None:
        raise InputError(f"no endpoint known for wire API {wire_api!r}: pass --base-url (and --key-env)")
    url = root.rstrip("/") + request.path
    env = key_env or (access.key_env if access else None)
    key = os.environ.get(env) if env else None
    if env and not key:
        raise InputError(f"record mode needs an API key in ${env}")
    auth = (access.auth(key) if access else {"authorization": f"Bearer {key}"}) if key else {}
    headers = {**request.headers, **auth}
    recorder = vcr.VCR(
        record_mode="all",
        filter_headers=secret_request_headers(),
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
        with cassette.open("rb") as fh:
            compressed = recording_files.gzipped(fh.read(2))
        if existing.format != "vcrpy" or recording_files.is_json(cassette) or compressed:
            # conform reads other recorders' files; vcrpy appends to its own YAML only
            what = f"a {existing.format} recording" if existing.format else "no recording"
            what = f"a gzip-compressed {what.removeprefix('a ')}" if compressed else what
            raise InputError(f"{cassette}: {what}, not a vcrpy YAML cassette; refusing to append to it")
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
