"""A misbehaving exec child for the host's fault tests (tests/test_exec_host.py): it serves a
reference adapter with `conformance.adapters.exec.serve`, and misbehaves as MODE says on the
first request of operation OP (`any`: any but hello; every one of them with `always`):

    python tests/exec_child.py MODE OP FLAG [always]

FLAG is a file: the misbehaviour happens while it does not exist and creates it, so the
restarted child behaves (one fault, one failing case). Modes: crash (stderr, exit 3), hang,
hang-hard (ignores SIGTERM), garbage (a line that is no JSON), wrong-id, huge (a line past the
host's limit), spam (MiBs of stderr, then the right answer), spam-crash, off-schema (an answer
with a field its schema does not have), drop-op (hello does not offer OP), die-mid-stream
(exit 4 on the second stream_feed).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from conformance.adapters import registry
from conformance.adapters.exec.serve import Server

ADAPTER = os.environ.get("EXEC_CHILD_ADAPTER", "anthropic")


def main() -> int:
    mode, op, flag = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    always = sys.argv[4:] == ["always"]
    out = sys.stdout.buffer
    server = Server(registry.load(ADAPTER), ADAPTER)
    feeds = 0
    for line in sys.stdin.buffer:
        request = json.loads(line)
        answer = server.answer(request)
        if request["op"] == "hello" and mode == "drop-op":
            ops = answer["result"]["adapter"]["operations"]
            answer["result"]["adapter"]["operations"] = [o for o in ops if o != op]
        feeds += request["op"] == "stream_feed"
        due = (request["op"] == op or (op == "any" and request["op"] != "hello")) and (always or not flag.exists())
        if mode == "die-mid-stream":
            due = request["op"] == "stream_feed" and feeds == 2 and not flag.exists()
        if due and mode != "drop-op":
            flag.touch()
            misbehave(mode, request, answer, out)
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()
        if request["op"] == "shutdown":
            return 0
    return 0


def misbehave(mode: str, request: dict, answer: dict, out) -> None:  # type: ignore[no-untyped-def]
    if mode in ("crash", "die-mid-stream"):
        sys.stderr.write(f"exec_child: boom on {request['op']} (request {request['id']})\n")
        sys.stderr.flush()
        os._exit(3 if mode == "crash" else 4)
    if mode in ("hang", "hang-hard"):
        if mode == "hang-hard":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    if mode == "garbage":
        out.write(b"this is not json\n")
        out.flush()
        time.sleep(3600)  # the host must not wait for more: it restarts the child
    if mode == "wrong-id":
        answer["id"] = request["id"] + 1000
    if mode == "huge":
        out.write(b'{"id": ' + str(request["id"]).encode() + b', "pad": "' + b"x" * (8 * 1024 * 1024))
        out.flush()
        time.sleep(3600)
    if mode in ("spam", "spam-crash"):
        for _ in range(64):
            sys.stderr.write("spam " * 20000 + "\n")  # 64 x 100 KB
        sys.stderr.write("exec_child: the last words\n")
        sys.stderr.flush()
        if mode == "spam-crash":
            os._exit(3)
    if mode == "off-schema":
        answer["result"]["unexpected"] = True


if __name__ == "__main__":
    sys.exit(main())
