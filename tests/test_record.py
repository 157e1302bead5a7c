"""Record mode against a local stand-in server: secrets never reach the cassette."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest

from conformance.cli import main
from conformance.suite.cassettes import load_cassette
from conformance.suite.scripts import conversation

SECRET = "sk-test-DO-NOT-LEAK-1234567890"
RESPONSE = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "hi from org-AbCdEf123456"},
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
}


class Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        Handler.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = json.dumps(RESPONSE).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("openai-organization", "org-AbCdEf123456")
        self.send_header("set-cookie", "__cf_bm=secret")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_record_scrubs_auth_and_account_ids(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    msgs, _ = conversation("openai", thinking=False, images=False, tools=False)
    conv = tmp_path / "c.jsonl"
    conv.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    out = tmp_path / "cassettes" / "openai-chat" / "rec.yaml"
    assert main(["wire", "record", "-a", "openai-chat", "--base-url", server, str(conv), str(out)]) == 0
    assert Handler.seen and Handler.seen[-1]["authorization"] == f"Bearer {SECRET}"  # the key was sent...
    text = out.read_text(encoding="utf-8")
    assert SECRET not in text and "authorization" not in text.lower()  # ...but never written
    assert "org-AbCdEf123456" not in text and "set-cookie" not in text.lower() and "org-REDACTED" in text
    it = load_cassette(out).interactions[0]
    assert (
        it.api == "openai-chat-completions"
        and it.response_json["choices"][0]["message"]["content"] == "hi from org-REDACTED"
    )


def test_record_without_key_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    msgs, _ = conversation("anthropic", thinking=False, images=False, tools=False)
    conv = tmp_path / "c.jsonl"
    conv.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    assert main(["wire", "record", "-a", "anthropic", str(conv), str(tmp_path / "x.yaml")]) == 2
    assert not (tmp_path / "x.yaml").exists()


def _conv(tmp_path):
    msgs, _ = conversation("openai", thinking=False, images=False, tools=False)
    conv = tmp_path / "c.jsonl"
    conv.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    return conv


def test_record_on_connection_refused_is_one_line(tmp_path, monkeypatch, capsys):
    import socket

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with socket.socket() as s:  # a port nothing listens on: bind, read the port, close
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "rec.yaml"
    rc = main(
        [
            "wire",
            "record",
            "-a",
            "openai-chat",
            "--base-url",
            f"http://127.0.0.1:{port}",
            str(_conv(tmp_path)),
            str(out),
        ]
    )
    err = capsys.readouterr().err.replace("\n", "")
    assert rc == 2 and "cannot reach the provider" in err and "Traceback" not in err
    assert not out.exists()


def test_record_refuses_an_existing_non_cassette(tmp_path, monkeypatch, capsys, server):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "notes.yaml"
    out.write_text("just: some\nnotes: [1, 2]\n", encoding="utf-8")
    before = out.read_bytes()
    rc = main(["wire", "record", "-a", "openai-chat", "--base-url", server, str(_conv(tmp_path)), str(out)])
    err = capsys.readouterr().err.replace("\n", "")  # the CLI wraps long error lines on a narrow console
    assert rc == 2 and str(out) in err and "refusing to append" in err
    assert out.read_bytes() == before


@pytest.mark.parametrize("name", ["go-vcr-v1.yaml", "ruby-vcr.yml", "polly.har"])
def test_record_refuses_to_append_to_another_recorders_file(tmp_path, monkeypatch, capsys, server, name):
    """conform reads go-vcr, VCR and HAR files; vcrpy would rewrite them in its own layout."""
    from pathlib import Path

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / name
    out.write_bytes((Path(__file__).parent / "data" / "recordings" / name).read_bytes())
    before = out.read_bytes()
    rc = main(["wire", "record", "-a", "openai-chat", "--base-url", server, str(_conv(tmp_path)), str(out)])
    err = capsys.readouterr().err.replace("\n", "")
    assert rc == 2 and "not a vcrpy YAML cassette; refusing to append" in err
    assert out.read_bytes() == before
