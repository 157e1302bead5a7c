"""`turnspec cassettes lint`: secrets and unscrubbed data in recorded HTTP cassettes.

Cassettes are committed to public repositories; the Anthropic, OpenAI and Google clients
put credentials in headers (`x-api-key`, `Authorization: Bearer`, `x-goog-api-key`) or the
query (`?key=`), and responses carry account identifiers (`openai-organization`,
`openai-project`, `anthropic-organization-id`) and cookies. This linter reads a cassette
as YAML *nodes* (so every finding has its line, and alias expansion is counted before
anything is built: a billion-laughs file is refused, not expanded) and looks at:

- headers by name: credentials (CL001), account/org/project ids (CL004), cookies (CL005);
- every string (headers, URI, bodies, `!!binary` bodies with their content coding undone by
  `content_coding.decode_content`, as the suite's readers undo it): provider API keys
  (CL002; the LLM providers' documented key shapes, which detect-secrets lacks), bearer
  tokens (CL003), org/project ids (CL004), signed URLs (CL006), and the credential
  shapes of detect-secrets' regex plugins (AWS, GitHub, Slack, Stripe, private keys,
  JWTs, basic auth in URLs, ...: CL008);
- request bodies by key: `api_key`, `access_token`, `password`, ... with a value (CL007).

The recorders' layouts are all read (`_Linter.walk`): vcrpy's, go-vcr's and VCR's YAML, and
JSON recordings (VCR's and vcrpy's JSON serializers, HAR, nock), which are composed as the
YAML flow style they are (`_json_as_yaml`), so their findings have lines too. An httprr
trace (Go, `*.httprr`: HTTP messages as sent, no YAML) is read as the nodes of vcrpy's layout
built from its records (`_trace_node`), each node marked with the line of the trace it is
on; it is linted, never rewritten (`fix` reports what it cannot scrub there, as for a
`!!binary` body: the records' sizes frame the trace).

A value that says it was scrubbed (`REDACTED`, `<API_KEY>`, `dummy`, `***`, ...) passes,
and so does a credential-shaped value with no random part (`AUTHORIZATION-XXX`, `Bearer
test_openai_api_key`, `invalid-key`: `is_placeholder`): a linter whose findings are mostly
placeholders is ignored.
`fix()` scrubs what was found and writes the file atomically (`diff()` shows what it would
write); a `!!binary` body is not rewritten (re-record it with a filter instead), which is
reported.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from ..core import pointers
from ..core.errors import InputError
from ..core.findings import Finding, RuleCatalog, RuleInfo, Severity
from ..core.jsonio import read_input
from ..core.outputs import check_output, write_bytes
from ..core.yamlio import MAX_DEPTH
from . import httprr_trace, recording_files, registry
from .content_coding import ContentCodingError, MissingDecoder, carries_signature, codings_of, decode_content, sniff
from .framing import loads_strict

E = Severity.ERROR
CREDENTIAL_HEADER = RuleInfo("CL001", E, "§11.2", "Credential header recorded (Authorization, x-api-key, ...)")
PROVIDER_KEY = RuleInfo("CL002", E, "§11.2", "Provider API key in the cassette")
BEARER = RuleInfo("CL003", E, "§11.2", "Bearer token in the cassette")
ACCOUNT_ID = RuleInfo("CL004", E, "§11.2", "Account, organization or project id recorded")
COOKIE = RuleInfo("CL005", E, "§11.2", "Cookie recorded")
SIGNED_URL = RuleInfo("CL006", E, "§11.2", "Signed URL (a credential in its query) recorded")
BODY_SECRET = RuleInfo("CL007", E, "§11.2", "Unscrubbed secret field in a request body")
OTHER_SECRET = RuleInfo("CL008", E, "§11.2", "Credential of a known shape (detect-secrets plugin)")
UNREADABLE = RuleInfo("CL009", E, "§11.2", "Cassette cannot be read")
CATALOG = RuleCatalog(
    [CREDENTIAL_HEADER, PROVIDER_KEY, BEARER, ACCOUNT_ID, COOKIE, SIGNED_URL, BODY_SECRET, OTHER_SECRET, UNREADABLE]
)

MAX_BYTES = 64 * 1024 * 1024
MAX_NODE_VISITS = 2_000_000  # alias expansion budget: a billion-laughs file stops here
REDACTED = "REDACTED"

# HTTP's own credential headers and common gateway ones; each API's own are in its record
# (`WireApi.access`), read through the registry when a cassette is linted
GENERIC_CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "x-amz-security-token",
        "openai-api-key",
        "anthropic-api-key",
    }
)
GENERIC_ACCOUNT_HEADERS = frozenset({"cf-access-client-id", "x-openai-organization"})


def credential_headers() -> frozenset[str]:
    return GENERIC_CREDENTIAL_HEADERS | registry.credential_headers()


def account_headers() -> frozenset[str]:
    return GENERIC_ACCOUNT_HEADERS | registry.account_headers()


COOKIE_HEADERS = frozenset({"cookie", "set-cookie"})
QUERY_KEYS = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token", "auth"})
SIGNATURE_QUERY = frozenset({"x-amz-signature", "x-goog-signature", "signature", "sig", "x-amz-credential"})
BODY_KEYS = re.compile(
    r"(?i)^(?:api[_-]?key|access[_-]?token|refresh[_-]?token|secret|client[_-]?secret|password|authorization)$"
)
# The LLM providers' documented key shapes (Anthropic console, OpenAI, Google AI Studio,
# Groq, xAI, Hugging Face): detect-secrets has no plugin for most of them.
PROVIDER_KEYS = re.compile(
    r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{20,}"
    r"|sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"
    r"|\bsk-[A-Za-z0-9]{32,}\b"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|\bgsk_[A-Za-z0-9]{40,}"
    r"|\bxai-[A-Za-z0-9]{40,}"
    r"|\bhf_[A-Za-z]{30,}"
)
BEARER_RE = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})")
ACCOUNT_RE = re.compile(r"\borg-[A-Za-z0-9]{20,}\b|\bproj_[A-Za-z0-9]{20,}\b")
SIGNED_URL_RE = re.compile(r"(?i)https?://[^\s\"']+[?&](?:x-amz-signature|x-goog-signature|signature|sig)=[^&\s\"']+")
SCRUBBED = re.compile(
    r"(?i)redacted|scrubbed|filtered|dummy|placeholder|fake|mock|example|xxxx|\*\*\*|<[^>]+>|\{\{.+\}\}|^\s*$"
)
DETECT_SECRETS_PLUGINS = (  # regex plugins only: the entropy and keyword plugins flag every thinking signature
    "AWSKeyDetector", "ArtifactoryDetector", "AzureStorageKeyDetector", "BasicAuthDetector",
    "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector",
    "MailchimpDetector", "NpmDetector", "OpenAIDetector", "PrivateKeyDetector", "PypiTokenDetector",
    "SendGridDetector", "SlackDetector", "SquareOAuthDetector", "StripeDetector",
    "TelegramBotTokenDetector", "TwilioKeyDetector",
)  # fmt: skip


@dataclass(frozen=True)
class Hit:
    """One finding and how to scrub it: `path` into the loaded data, `secret` the text to replace
    (None: replace the whole value)."""

    finding: Finding
    path: tuple[str | int, ...]
    secret: str | None
    binary: bool = False
    also: tuple[str, ...] = ()  # more text of the same finding to scrub (the other signing parameters of one URL)


def is_scrubbed(value: str) -> bool:
    return SCRUBBED.search(value) is not None


_SEGMENTS = re.compile(r"[-_.:/+= ]+")


def _random_looking(segment: str) -> bool:
    """A part of a value that could be key material: 8 characters or more, holding digits
    and letters, or upper and lower case past its first letter (`Authorization` is a word,
    `aB3x...` is not)."""
    if len(segment) < 8:
        return False
    has_digit = any(c.isdigit() for c in segment)
    has_alpha = any(c.isalpha() for c in segment)
    inner = segment[1:]
    mixed = any(c.isupper() for c in inner) and any(c.islower() for c in segment)
    return (has_digit and has_alpha) or mixed


def is_placeholder(value: str) -> bool:
    """A credential field's value that is scrubbed, or made only of words (no part that
    could be key material): `AUTHORIZATION-XXX`, `test_openai_api_key`, `invalid-key`.
    API keys and tokens are long random strings (every provider's documented shape has a
    random part of 20 characters or more), so a value without one holds no credential.
    Used for credentials only: an account name (`CL004`) is a real identifier whatever it
    looks like, and a password may be a word."""
    return is_scrubbed(value) or not any(_random_looking(s) for s in _SEGMENTS.split(value))


@cache
def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    """detect-secrets' regex plugins as (kind, pattern): their `analyze_string` yields only a
    pattern's first group (for GitHub tokens, the prefix `ghp`), so the matches are taken
    here whole, to report and scrub the full secret."""
    # function-level import: detect-secrets loads its plugin registry on import (slow), needed only here
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    out: list[tuple[str, re.Pattern[str]]] = []
    plugin: Any
    for plugin in get_mapping_from_secret_type_to_class().values():
        if plugin.__name__ in DETECT_SECRETS_PLUGINS:
            kind = plugin.__name__.removesuffix("Detector")
            out.extend((kind, rx) for rx in getattr(plugin, "denylist", ()))
    return out


def _read(path: Path) -> str:
    data = read_input(path, limit=MAX_BYTES)  # regular files only, stat-ed first, bounded
    try:
        data = recording_files.unwrap(data, MAX_BYTES)  # a gzip-compressed recording (LangChain's)
    except recording_files.RecordingFileError as exc:
        raise InputError(f"{path}: {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return _json_as_yaml(path, text) if recording_files.is_json(path) else text


# a JSON escape of a surrogate pair (`\ud83d\ude00`), after an even run of backslashes
_SURROGATES = re.compile(r"(?<!\\)((?:\\\\)*)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)


def _json_as_yaml(path: Path, text: str) -> str:
    """A JSON recording as YAML that composes to the same values on the same lines (JSON is
    YAML's flow style but for two spellings PyYAML refuses): tabs between tokens become
    spaces (a tab inside a JSON string is always escaped), and a surrogate pair's escape
    becomes YAML's `\\U` escape of the character. Nesting is bounded as every JSON read is."""
    try:
        loads_strict(text)
    except ValueError as exc:
        where = f"{path}:{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else str(path)
        raise InputError(f"{where}: not JSON: {getattr(exc, 'msg', exc)}") from None

    def pair(m: re.Match[str]) -> str:
        hi, lo = int(m.group(2), 16), int(m.group(3), 16)
        return f"{m.group(1)}\\U{0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00):08x}"

    return _SURROGATES.sub(pair, text.replace("\t", " "))


def _nesting(path: Path, text: str) -> None:
    """Refuse YAML nested deeper than `MAX_DEPTH` before composing it: PyYAML's parser is a
    state machine, its composer recurses (a deep file would exhaust the stack)."""
    depth = 0
    try:
        for ev in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    where = f"{path}:{ev.start_mark.line + 1}" if ev.start_mark is not None else str(path)
                    raise InputError(f"{where}: YAML nested deeper than {MAX_DEPTH} levels; refused")
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # composing reports it, with its line


def _compose(path: Path, text: str) -> yaml.Node:
    _nesting(path, text)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if node is None:
        raise InputError(f"{path}: empty file")
    # count visits with aliases expanded, without building anything
    visits, stack = 0, [node]
    while stack:
        n = stack.pop()
        visits += 1
        if visits > MAX_NODE_VISITS:
            raise InputError(f"{path}: YAML aliases expand past {MAX_NODE_VISITS} nodes; refused (alias bomb?)")
        if isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                stack.extend((k, v))
    return node


def _unwrap(raw: bytes, coding: str | None, where: str) -> bytes:
    """A `!!binary` body with its content coding undone: the coding its message's headers
    name, else the one its first bytes name (`content_coding.sniff`), else as it is; a body
    that is not what its coding says (decoded before it was recorded, damaged, a bomb) is
    read as it is. A body whose decoder is not installed stops the lint of the file
    (InputError, exit 2)."""
    coding = coding or sniff(raw)
    if not coding or carries_signature(raw, codings_of(coding)[-1]) is False:
        return raw
    try:
        return decode_content(raw, coding, "body")
    except ContentCodingError:
        return raw
    except MissingDecoder as exc:
        raise InputError(f"{where}: {exc}") from None


def _content_coding(message: yaml.MappingNode) -> str | None:
    """The Content-Encoding a recorded message's `headers` mapping names, or None."""
    headers = next((v for k, v in message.value if isinstance(k, yaml.ScalarNode) and k.value == "headers"), None)
    if not isinstance(headers, yaml.MappingNode):
        return None
    for k, v in headers.value:
        if isinstance(k, yaml.ScalarNode) and str(k.value).lower() == "content-encoding":
            values = v.value if isinstance(v, yaml.SequenceNode) else [v]
            return ", ".join(str(x.value) for x in values if isinstance(x, yaml.ScalarNode)) or None
    return None


class _Linter:
    def __init__(self, path: Path) -> None:
        self.name = str(path)
        self.hits: list[Hit] = []
        self.credential = credential_headers()  # the known APIs' (their records' `access`) and HTTP's own
        self.account = account_headers()
        self.codings: dict[tuple[str | int, ...], str] = {}  # a message's path -> its Content-Encoding

    def hit(self, rule: RuleInfo, node: yaml.Node, path: tuple[str | int, ...], message: str,
            secret: str | None = None, *, binary: bool = False, inner: str = "", also: tuple[str, ...] = ()) -> None:  # fmt: skip
        pointer = "".join(f"/{pointers.token(p)}" for p in path) + inner
        f = Finding(self.name, node.start_mark.line + 1, pointer, rule.id, rule.severity, message)
        self.hits.append(Hit(f, path, secret, binary, also))

    def walk(self, node: yaml.Node, path: tuple[str | int, ...] = ()) -> None:
        """Every node, read the way the recorders lay them out (`suite/recordings/`): vcrpy's,
        go-vcr's and VCR's `headers` mappings, HAR's `[{name, value}]` lists and nock's flat
        `rawHeaders`; the request URL as `uri` or `url`; the request body as vcrpy's
        `body`/`parsed_body`, VCR's `body: {string}`, HAR's `postData.text`, nock's `body`."""
        stack: list[tuple[yaml.Node, tuple[str | int, ...]]] = [(node, path)]
        while stack:
            n, p = stack.pop()
            if isinstance(n, yaml.MappingNode):
                keys = {k.value for k, _ in n.value if isinstance(k, yaml.ScalarNode)}
                if "headers" in keys and "body" in keys and (coding := _content_coding(n)):
                    self.codings[p] = coding
                for k, v in reversed(n.value):
                    key = k.value if isinstance(k, yaml.ScalarNode) else "?"
                    if p and p[-1] == "headers" and isinstance(key, str):
                        self.header(key, v, (*p, key))
                    if key in ("uri", "url") and isinstance(v, yaml.ScalarNode):
                        self.uri(v, (*p, key))
                    if _is_request_body(p, key, keys):
                        self.request_body(v, (*p, key))
                    stack.append((v, (*p, key)))
            elif isinstance(n, yaml.SequenceNode):
                if p and p[-1] in ("headers", "rawHeaders"):
                    self.header_list(n, p)
                if p and p[-1] == "cookies":  # HAR lists a message's cookies apart as well
                    self.cookie_list(n, p)
                for i, v in reversed(list(enumerate(n.value))):
                    stack.append((v, (*p, i)))
            elif isinstance(n, yaml.ScalarNode):
                self.scalar(n, p)

    def header_list(self, node: yaml.SequenceNode, path: tuple[str | int, ...]) -> None:
        """HAR's `[{name, value}, ...]` and nock's `[name, value, name, value, ...]`."""
        items = node.value
        if all(isinstance(x, yaml.ScalarNode) for x in items) and len(items) % 2 == 0:
            for i in range(0, len(items), 2):
                self.header(str(items[i].value), items[i + 1], (*path, i + 1))
            return
        for i, x in enumerate(items):
            if isinstance(x, yaml.MappingNode):
                fields = {k.value: v for k, v in x.value if isinstance(k, yaml.ScalarNode)}
                name, value = fields.get("name"), fields.get("value")
                if isinstance(name, yaml.ScalarNode) and value is not None:
                    self.header(str(name.value), value, (*path, i, "value"))

    def header(self, name: str, node: yaml.Node, path: tuple[str | int, ...]) -> None:
        low = name.lower()
        values = [
            v for v in (node.value if isinstance(node, yaml.SequenceNode) else [node]) if isinstance(v, yaml.ScalarNode)
        ]
        for i, v in enumerate(values):
            text = str(v.value)
            at = (*path, i) if isinstance(node, yaml.SequenceNode) else path
            bare = text.removeprefix("Bearer ").removeprefix("bearer ")
            if is_scrubbed(bare) or (low in self.credential and is_placeholder(bare)):
                continue
            if low in self.credential:
                self.hit(CREDENTIAL_HEADER, v, at, f"header {name} holds a credential; scrub it (vcrpy filter_headers)")
            elif low in self.account:
                self.hit(ACCOUNT_ID, v, at, f"header {name} identifies the recording account; scrub it")
            elif low in COOKIE_HEADERS:
                self.hit(COOKIE, v, at, f"header {name} holds a cookie; scrub it")

    def cookie_list(self, node: yaml.SequenceNode, path: tuple[str | int, ...]) -> None:
        for i, x in enumerate(node.value):
            fields = {k.value: v for k, v in x.value if isinstance(k, yaml.ScalarNode)} if isinstance(x, yaml.MappingNode) else {}  # fmt: skip
            value = fields.get("value")
            if isinstance(value, yaml.ScalarNode) and str(value.value) and not is_scrubbed(str(value.value)):
                self.hit(COOKIE, value, (*path, i, "value"), "cookie recorded; scrub it")

    def uri(self, node: yaml.ScalarNode, path: tuple[str | int, ...]) -> None:
        signing: list[tuple[str, str]] = []
        for k, v in parse_qsl(urlsplit(str(node.value)).query, keep_blank_values=False):
            if is_scrubbed(v) or (k.lower() in QUERY_KEYS and is_placeholder(v)):
                continue
            if k.lower() in QUERY_KEYS:
                self.hit(PROVIDER_KEY, node, path, f"query parameter {k}= holds a credential", secret=v)
            elif k.lower() in SIGNATURE_QUERY:
                signing.append((k, v))
        if signing:  # one signed URL, one finding, whatever number of parameters sign it
            names = ", ".join(f"{k}=" for k, _ in signing)
            secrets = tuple(v for _, v in signing)
            self.hit(SIGNED_URL, node, path, f"query parameter(s) {names} sign the URL", secrets[0], also=secrets[1:])

    def request_body(self, node: yaml.Node, path: tuple[str | int, ...]) -> None:
        if isinstance(node, yaml.MappingNode):  # VCR's `body: {encoding, string}`
            text = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "string"), None)
            if isinstance(text, yaml.ScalarNode) and len(node.value) <= 3:
                self.request_body(text, (*path, "string"))
                return
        body: Any = None
        if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str):
            try:
                body = json.loads(node.value)
            except ValueError:
                return
        elif isinstance(node, yaml.MappingNode):
            body = recording_files.load_yaml(yaml.serialize(node))  # bounded: _compose counted the node graph
        stack: list[tuple[Any, str]] = [(body, "")]
        while stack:
            v, ptr = stack.pop()
            if isinstance(v, dict):
                for k, x in v.items():
                    kp = f"{ptr}/{pointers.token(k)}"
                    if BODY_KEYS.match(str(k)) and isinstance(x, str) and not is_scrubbed(x):
                        self.hit(BODY_SECRET, node, path, f"request body field {k!r} holds a value; scrub it",
                                 secret=x, inner=kp if isinstance(node, yaml.ScalarNode) else "")  # fmt: skip
                    stack.append((x, kp))
            elif isinstance(v, list):
                stack.extend((x, f"{ptr}/{i}") for i, x in enumerate(v))

    def scalar(self, node: yaml.ScalarNode, path: tuple[str | int, ...]) -> None:
        value = node.value
        binary = node.tag == "tag:yaml.org,2002:binary"
        if binary:
            coding = next((self.codings[path[:i]] for i in range(len(path), -1, -1) if path[:i] in self.codings), None)
            try:
                raw = base64.b64decode(value)
                value = _unwrap(raw, coding, f"{self.name}:{node.start_mark.line + 1}").decode("utf-8", "replace")
            except binascii.Error:  # not base64: no text to read
                return
        if not isinstance(value, str) or len(value) < 8:
            return
        self.text(node, path, value, binary)

    def text(self, node: yaml.ScalarNode, path: tuple[str | int, ...], value: str, binary: bool) -> None:
        for m in PROVIDER_KEYS.finditer(value):
            if not is_scrubbed(m.group(0)):
                self.hit(PROVIDER_KEY, node, path, f"provider API key {m.group(0)[:10]}...", m.group(0), binary=binary)
        for m in BEARER_RE.finditer(value):
            if not is_placeholder(m.group(1)) and path[-2:-1] != ("authorization",) and path[-1:] != ("authorization",):
                self.hit(BEARER, node, path, "bearer token", m.group(1), binary=binary)
        for m in ACCOUNT_RE.finditer(value):
            self.hit(ACCOUNT_ID, node, path, f"account id {m.group(0)[:8]}...", m.group(0), binary=binary)
        if path[-1:] not in (("uri",), ("url",)):  # a request's own URI: its signing parameters are reported by `uri`
            for m in SIGNED_URL_RE.finditer(value):
                self.hit(SIGNED_URL, node, path, "signed URL", m.group(0), binary=binary)
        seen = {h.secret for h in self.hits if h.path == path}
        for kind, rx in _patterns():
            for m in rx.finditer(value):
                # a pattern that captures (AWS secret keys in context) names the secret in group 1
                secret = m.group(1) if rx.groups and m.group(1) and len(m.group(1)) >= 8 else m.group(0)
                if secret not in seen and not is_scrubbed(secret):
                    seen.add(secret)
                    self.hit(OTHER_SECRET, node, path, f"{kind} credential", secret, binary=binary)


def _mark(path: Path, line: int) -> yaml.Mark:
    return yaml.Mark(str(path), 0, line - 1, 0, None, 0)


def _scalar(path: Path, line: int, value: bytes | str) -> yaml.ScalarNode:
    """A node for a value of a trace: text as it is, bytes as `!!binary` (base64) unless UTF-8."""
    if isinstance(value, bytes):
        raw = value
        try:
            value = raw.decode("utf-8")
        except UnicodeDecodeError:
            coded = base64.b64encode(raw).decode("ascii")
            return yaml.ScalarNode("tag:yaml.org,2002:binary", coded, _mark(path, line), _mark(path, line))
    return yaml.ScalarNode("tag:yaml.org,2002:str", value, _mark(path, line), _mark(path, line))


def _map(path: Path, line: int, items: Sequence[tuple[str, yaml.Node]]) -> yaml.MappingNode:
    pairs = [(_scalar(path, n.start_mark.line + 1, k), n) for k, n in items]
    return yaml.MappingNode("tag:yaml.org,2002:map", pairs, _mark(path, line), _mark(path, line))


def _trace_node(path: Path) -> yaml.Node:
    """An httprr trace as the nodes of a vcrpy cassette (`interactions: [{request: {method,
    uri, headers, body}, response: {status, headers, body: {string}}}]`), each on the line of
    the trace it comes from, so the walker reads it as every other layout."""
    data = read_input(path, limit=MAX_BYTES)
    try:
        data = recording_files.unwrap(data, MAX_BYTES)
        items: list[yaml.Node] = []
        for rec in httprr_trace.records(data):
            parts: list[tuple[str, yaml.Node]] = []
            for name, raw, line in (
                ("request", rec.request, rec.request_line),
                ("response", rec.response, rec.response_line),
            ):
                msg = httprr_trace.message(raw, line, name)
                headers: dict[str, list[yaml.Node]] = {}
                for field, value, at in msg.fields:
                    headers.setdefault(field, []).append(_scalar(path, at, value))
                seqs = [(k, yaml.SequenceNode("tag:yaml.org,2002:seq", v, v[0].start_mark, v[0].start_mark))
                        for k, v in headers.items()]  # fmt: skip
                body: yaml.Node = _scalar(path, msg.body_line, msg.body)
                if name == "response":
                    body = _map(path, msg.body_line, [("string", body)])
                first: tuple[str, yaml.Node] = (
                    ("uri", _scalar(path, line, msg.start.split(" ")[1] if " " in msg.start else msg.start))
                    if name == "request" else ("status", _scalar(path, line, msg.start))
                )  # fmt: skip
                parts.append((name, _map(path, line, [first, ("headers", _map(path, line, seqs)), ("body", body)])))
            items.append(_map(path, rec.line, parts))
    except (recording_files.RecordingFileError, httprr_trace.TraceError) as exc:
        raise InputError(f"{path}: {exc}") from None
    seq = yaml.SequenceNode("tag:yaml.org,2002:seq", items, _mark(path, 1), _mark(path, 1))
    return _map(path, 1, [("interactions", seq)])


def lint(path: Path) -> list[Hit]:
    """Every secret found in one cassette, in file order. Unreadable input raises InputError."""
    node = _trace_node(path) if recording_files.is_trace(path) else _compose(path, _read(path))
    linter = _Linter(path)
    linter.walk(node)
    # one report per place: a header also matched by a string pattern is one finding
    out: dict[tuple[tuple[str | int, ...], str | None], Hit] = {}
    for h in linter.hits:
        key = (h.path, None) if h.secret is None else (h.path, h.secret)
        if (h.path, None) in out and h.secret is not None:
            continue
        out.setdefault(key, h)
    return sorted(out.values(), key=lambda h: (h.finding.line or 0, h.finding.pointer, h.finding.rule))


def _is_request_body(path: tuple[str | int, ...], key: str, keys: set[Any]) -> bool:
    """Whether `key` of the mapping at `path` (holding `keys`) is a recorded request body."""
    if key in ("body", "parsed_body") and path[-1:] == ("request",):
        return True  # vcrpy, go-vcr, VCR
    if key == "text" and path[-1:] == ("postData",):
        return True  # HAR
    return key == "body" and "scope" in keys and "method" in keys  # nock


def iter_cassettes(paths: list[Path]) -> Iterator[Path]:
    for p in paths:
        if p.is_dir() and not p.is_symlink():
            yield from sorted(q for q in p.rglob("*") if recording_files.is_recording_name(q.name) and q.is_file())
        else:
            yield p


def scrubbed(path: Path, hits: list[Hit]) -> tuple[str | None, list[str]]:
    """The cassette `path` with `hits` scrubbed (None: nothing that can be scrubbed), and
    what cannot be scrubbed (binary bodies)."""
    problems = [f"{h.finding.path}:{h.finding.line}: {h.finding.rule} inside a !!binary body; re-record with a filter"
                for h in hits if h.binary]  # fmt: skip
    todo = [h for h in hits if not h.binary]
    if not todo:
        return None, problems
    if recording_files.is_trace(path):  # its records' sizes frame it: scrubbed where it is recorded
        return None, problems + [
            f"{h.finding.path}:{h.finding.line}: {h.finding.rule} in an httprr trace, which --fix does not "
            "rewrite (its records' sizes frame it); scrub it with httprr's ScrubReq/ScrubResp and re-record"
            for h in todo
        ]
    data = recording_files.load_yaml(_read(path))  # bounded: lint() composed and counted it first (JSON too)
    for h in todo:
        parent: Any = data
        for key in h.path[:-1]:
            parent = parent[key]
        last = h.path[-1]
        value = parent[last]
        if h.secret is None:
            parent[last] = REDACTED
            continue
        for secret in (h.secret, *h.also):
            if isinstance(value, str):
                value = value.replace(secret, REDACTED)
            elif isinstance(value, dict | list):  # a parsed_body mapping: scrub every string in it
                value = json.loads(json.dumps(value).replace(json.dumps(secret)[1:-1], REDACTED))
        parent[last] = value
    if recording_files.is_json(path):  # a JSON recording stays JSON
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n", problems
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=False, allow_unicode=True, width=4096), problems


def diff(path: Path, hits: list[Hit]) -> tuple[list[str], list[str]]:
    """What `fix` would change in `path`, as unified-diff lines, and what it cannot scrub."""
    text, problems = scrubbed(path, hits)
    if text is None:
        return [], problems
    return list(
        difflib.unified_diff(_read(path).splitlines(), text.splitlines(), str(path), str(path), lineterm="")
    ), problems


def fix(path: Path, hits: list[Hit]) -> list[str]:
    """Scrub `hits` in `path`, atomically; returns what could not be scrubbed (binary bodies)."""
    text, problems = scrubbed(path, hits)
    if text is None:
        return problems
    check_output(path, [], in_place=True)
    data = text.encode("utf-8")
    if recording_files.gzipped(read_input(path, limit=MAX_BYTES)):  # a compressed recording stays compressed
        data = recording_files.compress(data)
    write_bytes(path, [data])  # atomic, keeps the cassette's mode
    return problems
