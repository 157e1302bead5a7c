"""`turnspec cassettes lint`: every planted secret is found at its line, scrubbed by --fix
--in-place atomically, and the project's own cassettes are clean."""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import string
from pathlib import Path

import pytest
import shared_paths
import yaml

from conformance.cli import main
from conformance.wire.cassette_lint import lint

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = shared_paths.WIRE
R = random.Random(7)


def tok(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


# one secret of each kind, shaped as the issuers document them (generated: never real)
ANTHROPIC_KEY = f"sk-ant-api03-{tok(93)}"
OPENAI_KEY = f"sk-proj-{tok(48)}T3BlbkFJ{tok(48)}"
GOOGLE_KEY = f"AIza{tok(35)}"
BEARER = tok(40)
ORG = f"org-{tok(24)}"
AWS = "AKIA" + tok(16, string.ascii_uppercase + string.digits)
GITHUB = "ghp_" + tok(36)
SIGNED = f"https://bucket.s3.amazonaws.com/img.png?X-Amz-Credential=a&X-Amz-Signature={tok(64, '0123456789abcdef')}"


def cassette(tmp_path: Path) -> Path:
    body = {"model": "m", "api_key": tok(30), "messages": [{"role": "user", "content": f"see {SIGNED}"}]}
    data = {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(body),
                    "headers": {
                        "x-api-key": [ANTHROPIC_KEY],
                        "Authorization": [f"Bearer {BEARER}"],
                        "content-type": ["application/json"],
                    },
                    "method": "POST",
                    "uri": f"https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?key={GOOGLE_KEY}",
                },
                "response": {
                    "body": {"string": json.dumps({"note": f"token {OPENAI_KEY}", "aws": AWS, "gh": GITHUB})},
                    "headers": {"openai-organization": [ORG], "Set-Cookie": [f"__cf_bm={tok(40)}; path=/"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }
    p = tmp_path / "planted.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False, width=4096))
    return p


EXPECTED = {
    ("CL001", "/interactions/0/request/headers/x-api-key/0"),
    ("CL001", "/interactions/0/request/headers/Authorization/0"),
    ("CL002", "/interactions/0/request/uri"),
    ("CL002", "/interactions/0/response/body/string"),
    ("CL004", "/interactions/0/response/headers/openai-organization/0"),
    ("CL005", "/interactions/0/response/headers/Set-Cookie/0"),
    ("CL006", "/interactions/0/request/body"),
    ("CL007", "/interactions/0/request/body/api_key"),
    ("CL008", "/interactions/0/response/body/string"),
}


def test_every_planted_secret_is_found_at_its_line(tmp_path: Path) -> None:
    p = cassette(tmp_path)
    hits = lint(p)
    found = {(h.finding.rule, h.finding.pointer) for h in hits}
    assert found >= EXPECTED, EXPECTED - found
    lines = p.read_text().splitlines()
    for h in hits:
        assert h.finding.line is not None and 1 <= h.finding.line <= len(lines)
    aws = [h for h in hits if h.secret == AWS]
    gh = [h for h in hits if h.secret == GITHUB]
    assert aws and gh and all(h.finding.rule == "CL008" for h in aws + gh)
    assert any(h.secret == OPENAI_KEY for h in hits)


def test_bearer_token_outside_headers_and_placeholders(tmp_path: Path) -> None:
    data = {"interactions": [{"request": {"body": f"curl -H 'Authorization: Bearer {BEARER}'", "headers": {
        "authorization": ["Bearer <REDACTED>"], "x-goog-api-key": ["DUMMY_GOOGLE_API_KEY"],
        "openai-organization": ["user-redacted"]}, "uri": "https://x/v1/chat/completions?key=<API_KEY>"}}]}  # fmt: skip
    p = tmp_path / "b.yaml"
    p.write_text(yaml.safe_dump(data))
    assert [(h.finding.rule, h.finding.pointer) for h in lint(p)] == [("CL003", "/interactions/0/request/body")]


def test_gzip_binary_bodies_are_read(tmp_path: Path) -> None:
    raw = gzip.compress(json.dumps({"k": ANTHROPIC_KEY}).encode())
    p = tmp_path / "g.yaml"
    p.write_text(
        f"interactions:\n- response:\n    body:\n      string: !!binary |\n        {base64.b64encode(raw).decode()}\n"
    )
    [h] = lint(p)
    assert (h.finding.rule, h.finding.line, h.binary) == ("CL002", 4, True)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["cassettes", "lint", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_fix_in_place_scrubs_atomically_and_keeps_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = cassette(tmp_path)
    p.chmod(0o644)
    before = yaml.safe_load(p.read_text())
    rc, out, _ = cli(capsys, str(p), "--fix")  # without --in-place: shows, writes nothing
    assert rc == 1 and "would scrub" in out and yaml.safe_load(p.read_text()) == before
    rc, out, _ = cli(capsys, str(p), "--fix", "--in-place")
    assert rc == 0, out
    assert lint(p) == []
    after = yaml.safe_load(p.read_text())
    text = p.read_text()
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, GOOGLE_KEY, BEARER, ORG, AWS, GITHUB):
        assert secret not in text
    assert after["interactions"][0]["request"]["headers"]["content-type"] == ["application/json"]
    assert json.loads(after["interactions"][0]["request"]["body"])["messages"][0]["role"] == "user"
    assert after["interactions"][0]["response"]["status"] == {"code": 200, "message": "OK"}
    assert oct(p.stat().st_mode & 0o777) == "0o644"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["planted.yaml"]  # no temp file left
    rc, _, err = cli(capsys, str(p), "--in-place")
    assert rc == 2 and "--fix" in err


def test_binary_bodies_are_reported_not_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = gzip.compress(json.dumps({"k": ANTHROPIC_KEY}).encode())
    p = tmp_path / "g.yaml"
    p.write_text(
        f"interactions:\n- response:\n    body:\n      string: !!binary |\n        {base64.b64encode(raw).decode()}\n"
    )
    before = p.read_bytes()
    rc, out, _ = cli(capsys, str(p), "--fix", "--in-place")
    assert rc == 1 and "not scrubbed" in out and p.read_bytes() == before


def test_hostile_cassettes_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bomb = tmp_path / "bomb.yaml"
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]")
    bomb.write_text("\n".join(lines) + "\n")
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    for p, needle in ((bomb, "alias"), (fifo, "not a regular file"), (bad, "bad.yaml:")):
        rc, _, err = cli(capsys, str(p))
        assert rc == 2 and needle in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1


def test_the_projects_own_cassettes_are_clean(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, str(ROOT / "cassettes"))
    assert rc == 0, out


@pytest.mark.samples
def test_real_samples_keep_account_ids_and_cookies_which_are_found(capsys: pytest.CaptureFixture[str]) -> None:
    """samples/README: 'some org/project ids and Cloudflare cookies remain (a cassette
    linter should flag those)'; the auth headers were removed or placeholdered."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples/wire is absent")
    rc, out, _ = cli(capsys, str(SAMPLES), "-o", "json")
    assert rc == 1
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert {"CL004", "CL005"} <= rules and "CL001" not in rules


@pytest.mark.parametrize(
    "placeholder",
    ["AUTHORIZATION-XXX", "Bearer test_openai_api_key", "invalid-key", "Bearer my-api-key", "sk-ant-your-key-here"],
)
def test_scrubbed_placeholders_are_not_credentials(tmp_path: Path, placeholder: str) -> None:
    """Recordings from other projects hold placeholders their own filters wrote (issue 25):
    a credential field whose value has no random part holds no credential."""
    bare = placeholder.removeprefix("Bearer ")
    data = {"interactions": [{"request": {"body": "", "headers": {
        "authorization": [placeholder], "x-api-key": [bare]}, "uri": f"https://x/v1/models/g:generate?key={bare}"},
        "response": {"body": {"string": f"curl -H 'Authorization: Bearer {bare}'"}}}]}  # fmt: skip
    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump(data))
    assert lint(p) == []


@pytest.mark.parametrize("token", [BEARER, ANTHROPIC_KEY, GOOGLE_KEY, "test_" + tok(24), "invalid-" + tok(12)])
def test_a_real_token_beside_placeholder_words_is_still_found(tmp_path: Path, token: str) -> None:
    data = {"interactions": [{"request": {"body": "", "headers": {"authorization": [f"Bearer {token}"]},
                                          "uri": f"https://x/v1/g?key={token}"}}]}  # fmt: skip
    p = tmp_path / "t.yaml"
    p.write_text(yaml.safe_dump(data))
    assert {h.finding.rule for h in lint(p)} >= {"CL001", "CL002"}


def test_a_signed_request_uri_is_one_finding(tmp_path: Path) -> None:
    data = {"interactions": [{"request": {"body": "", "headers": {}, "uri": SIGNED}}]}
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(data))
    assert [(h.finding.rule, h.finding.pointer) for h in lint(p)] == [("CL006", "/interactions/0/request/uri")]


def test_fix_without_in_place_shows_the_diff_it_would_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = cassette(tmp_path)
    before = p.read_bytes()
    rc, out, _ = cli(capsys, str(p), "--fix")
    assert rc == 1 and p.read_bytes() == before
    removed = [line for line in out.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert any(ANTHROPIC_KEY in line for line in removed)
    assert any("REDACTED" in line for line in added) and not any(ANTHROPIC_KEY in line for line in added)
    assert f"--- {p}" in out and f"+++ {p}" in out


def test_bedrocks_credential_headers_are_flagged(tmp_path: Path) -> None:
    """Bedrock's record (`access.credential_headers`) names SigV4's `authorization` and the
    session token of temporary credentials, `x-amz-security-token`: both are flagged."""
    from conformance.wire.bedrock import BEDROCK_CONVERSE

    assert {"authorization", "x-amz-security-token"} <= set(BEDROCK_CONVERSE.access.credential_headers)
    headers = {"x-amz-security-token": ["AQoDYXdzEJr1K2h8tq9xLm3Qw7ZpYv4R"]}
    data = {
        "interactions": [{"request": {"headers": headers, "uri": "https://bedrock-runtime.us-east-1.amazonaws.com/"}}]
    }
    p = tmp_path / "bedrock.yaml"
    p.write_text(yaml.safe_dump(data))
    assert [(h.finding.rule, h.finding.pointer) for h in lint(p)] == [
        ("CL001", "/interactions/0/request/headers/x-amz-security-token/0")
    ]


def test_anthropics_workspace_id_header_is_an_account_id(tmp_path: Path) -> None:
    """Real Anthropic responses carry `anthropic-workspace-id`, the `wrkspc_...` id the Admin
    API names the key's workspace by ("Get Workspace"): flagged as the organization id is."""
    headers = {"Anthropic-Workspace-Id": ["wrkspc_01Hx7Qm2Lp9Vt4Rz8Kc3Nw6Y"], "Content-Type": ["application/json"]}
    data = {"version": 2, "interactions": [{"request": {"url": "https://api.anthropic.com/v1/messages"},
                                             "response": {"headers": headers, "code": 200}}]}  # fmt: skip
    p = tmp_path / "go-vcr.yaml"
    p.write_text(yaml.safe_dump(data))
    assert [(h.finding.rule, h.finding.pointer) for h in lint(p)] == [
        ("CL004", "/interactions/0/response/headers/Anthropic-Workspace-Id/0")
    ]


RECORDINGS = ROOT / "tests" / "data" / "recordings"


def _line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, t in enumerate(text.splitlines()) if needle in t)


def test_every_recorders_layout_is_linted_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """HAR's `[{name, value}]` headers and `url`, nock's flat `rawHeaders` and `body`, go-vcr's
    `url`, VCR's `body: {string}`; a JSON file tab-indented and with a surrogate-pair escape
    (both of which PyYAML refuses as such) linted at its lines and scrubbed back to JSON."""
    har = json.loads((RECORDINGS / "polly.har").read_text())
    entry = har["log"]["entries"][0]
    entry["request"]["headers"].append({"name": "x-api-key", "value": ANTHROPIC_KEY})
    entry["request"]["url"] += f"?key={GOOGLE_KEY}"
    entry["response"]["cookies"] = [{"name": "__cf_bm", "value": tok(40), "path": "/"}]
    entry["response"]["content"]["text"] = entry["response"]["content"]["text"].replace("there.", "\U0001f600")
    (tmp_path / "polly.har").write_text(json.dumps(har, indent="\t"))  # ensure_ascii: \ud83d\ude00
    nock = json.loads((RECORDINGS / "nock.json").read_text())
    nock[0]["rawHeaders"] += ["Set-Cookie", f"__cf_bm={tok(40)}; path=/"]
    nock[0]["body"]["api_key"] = tok(24)
    (tmp_path / "nock.json").write_text(json.dumps(nock, indent=2))
    go = (RECORDINGS / "go-vcr-v1.yaml").read_text()
    go = go.replace("url: https://api.openai.com/v1/chat/completions", f"url: https://api.openai.com/v1/chat/completions?key={GOOGLE_KEY}", 1)  # fmt: skip
    (tmp_path / "go.yaml").write_text(go)
    ruby = (RECORDINGS / "ruby-vcr.yml").read_text().replace('{\\"model\\": \\"gpt-4o\\"', f'{{\\"password\\": \\"{tok(20)}\\", \\"model\\": \\"gpt-4o\\"', 1)  # fmt: skip
    (tmp_path / "ruby.yml").write_text(ruby)
    found = {p.name: [(h.finding.rule, h.finding.line, h.finding.pointer) for h in lint(p)] for p in sorted(tmp_path.iterdir())}  # fmt: skip
    text = (tmp_path / "polly.har").read_text()
    assert found["polly.har"] == [
        ("CL001", _line_of(text, ANTHROPIC_KEY), "/log/entries/0/request/headers/1/value"),
        ("CL002", _line_of(text, GOOGLE_KEY), "/log/entries/0/request/url"),
        ("CL005", _line_of(text, '"__cf_bm"') + 1, "/log/entries/0/response/cookies/0/value"),
    ]
    text = (tmp_path / "nock.json").read_text()
    assert found["nock.json"] == [
        ("CL007", _line_of(text, '"body"'), "/0/body"),
        ("CL005", _line_of(text, "__cf_bm"), "/0/rawHeaders/5"),
    ]
    assert found["go.yaml"] == [("CL002", _line_of(go, GOOGLE_KEY), "/interactions/0/request/url")]
    assert [(r, p) for r, _, p in found["ruby.yml"]] == [("CL007", "/http_interactions/0/request/body/string/password")]
    rc, _, _ = cli(capsys, str(tmp_path), "--fix", "--in-place")
    assert rc == 0 and all(lint(p) == [] for p in tmp_path.iterdir())
    fixed = json.loads((tmp_path / "polly.har").read_text())  # still JSON, the rest kept
    assert fixed["log"]["entries"][0]["response"]["content"]["text"].count("\U0001f600") == 1
    assert json.loads((tmp_path / "nock.json").read_text())[0]["rawHeaders"][5] == "REDACTED"


@pytest.mark.parametrize("coding", ["br", "zstd", "deflate", "gzip, br"])
def test_coded_binary_bodies_are_read_through_the_readers_decoder(tmp_path: Path, coding: str) -> None:
    """The linter undoes a `!!binary` body's coding with `content_coding.decode_content`, as
    the suite's readers do: named by the message's Content-Encoding (br has no signature),
    else by its first bytes (zstd's magic, a zlib header)."""
    brotli = pytest.importorskip("brotli", reason="the [recordings] extra (brotli) is not installed")
    zstandard = pytest.importorskip("zstandard", reason="the [recordings] extra (zstandard) is not installed")
    import zlib

    plain = json.dumps({"k": ANTHROPIC_KEY}).encode()
    coded = {
        "br": brotli.compress(plain),
        "zstd": zstandard.ZstdCompressor().compress(plain),
        "deflate": zlib.compress(plain),
        "gzip, br": brotli.compress(gzip.compress(plain)),
    }[coding]
    named = coding in ("br", "gzip, br")  # the others are found by their bytes, without a header
    headers = f"    headers:\n      Content-Encoding:\n      - {coding}\n" if named else ""
    p = tmp_path / "c.yaml"
    p.write_text(
        f"interactions:\n- response:\n{headers}    body:\n"
        f"      string: !!binary |\n        {base64.b64encode(coded).decode()}\n"
    )
    [h] = lint(p)
    assert (h.finding.rule, h.binary) == ("CL002", True)


def test_a_coded_body_whose_decoder_is_missing_is_unreadable_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    zstandard = pytest.importorskip("zstandard", reason="the [recordings] extra (zstandard) is not installed")
    import sys

    coded = zstandard.ZstdCompressor().compress(json.dumps({"k": ANTHROPIC_KEY}).encode())
    p = tmp_path / "z.yaml"
    p.write_text(
        f"interactions:\n- response:\n    body:\n      string: !!binary |\n        {base64.b64encode(coded).decode()}\n"
    )
    monkeypatch.setitem(sys.modules, "zstandard", None)
    rc, out, err = cli(capsys, str(p))
    assert rc == 2, (out, err)
    assert f"{p}:4: body is zstd-coded, which needs the Python package 'zstandard'" in out + err
    assert "pip install 'turnspec[recordings]'" in out + err and "Traceback" not in out + err
