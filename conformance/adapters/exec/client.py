"""The protocol client: one request line, one answer line (docs/exec-protocol.md). It starts
the child with a `hello`, restarts it after a fault (giving up after `MAX_RESTARTS` in a
row), replays each answer's logs, raises each typed error as the project's exception, and,
with `validate`, checks every message both ways against `schemas/exec/v1/`."""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING, Any, NoReturn

from ...core import jsonio
from ...core.errors import InputError
from ..errors import OperationNotOffered
from . import codec, process
from .faults import CallTimedOut, ChildDied, ExecFault, GaveUp, ProtocolError, replay, stderr_clause, with_stderr
from .manifest import ExecConfig

if TYPE_CHECKING:
    from ...core.schema_validation import SchemaValidator

MAX_RESTARTS = 5
START_WAIT_S = 60.0  # the least a `hello` is given: a start, not a call (docs/exec-protocol.md, Faults)
MAX_FAULTS_KEPT = 100  # faults noted between two `take_faults` (a runner takes them after each check)
SHUTDOWN_WAIT_S = 2.0
RESTARTED = "; restarted the child"
QUOTED_LINE = 120  # characters of a line that is no JSON quoted in the protocol error
STDOUT_HINT = " (standard output carries protocol lines only: write diagnostics to standard error)"

RESULT_SCHEMAS = {
    "hello": "hello-result.json",
    "render": "render-result.json",
    "parse": "parse-result.json",
    "stream_open": "stream-result.json",
    "stream_feed": "stream-result.json",
    "stream_close": "stream-result.json",
    "cancel": "cancel-result.json",
    "read_request": "read-request-result.json",
    "estimate": "estimate-result.json",
    "tool_id_map": "tool-id-map-result.json",
    "shutdown": "shutdown-result.json",
}
"""The schema of each operation's result (`answer.json` holds the envelope)."""


def quoted_line(raw: bytes) -> str:
    """An output line that is no JSON, quoted (escaped, cut at `QUOTED_LINE` characters), so
    the case shows what the child printed: `'debug: rendering now'`."""
    text = raw.decode("utf-8", "replace")
    return repr(text) if len(text) <= QUOTED_LINE else repr(text[:QUOTED_LINE]) + f"... ({len(raw)} bytes)"


class ExecClient:
    """One exec adapter's connection to its child, restarted as needed."""

    def __init__(self, config: ExecConfig) -> None:
        self.config = config
        self._child: process.Child | None = None
        self._ids = itertools.count(1)
        self._restarts = 0  # restarts since the last answered call
        self._gave_up: str | None = None
        self._faults: list[str] = []
        self._last_fault = ""  # the last fault's reason without the label, for the give-up's
        self._abandoned: list[str] = []
        self._validators: dict[str, SchemaValidator] = {}
        self.info: dict[str, Any] = {}
        self.name = "exec"
        self._start_first()

    # -- starting ------------------------------------------------------------------------

    def _start_first(self) -> None:
        """The first child: a failure here means the adapter could not be started (exit 2)."""
        try:
            self._spawn()
        except ExecFault as exc:
            # the label once, and no "restarted": nothing is restarted, the run ends here
            why = str(exc).removeprefix(f"{self.config.label}: ")
            for restarted in (RESTARTED, "; stopped the child (SIGTERM, then SIGKILL) and restarted it"):
                why = why.replace(restarted, "")
            raise InputError(f"{self.config.label}: could not start the adapter: {why}") from None

    def _spawn(self) -> None:
        try:
            child = process.Child(self.config.command, cwd=self.config.cwd, env=self.config.env)
        except process.ChildStartFailed as exc:
            raise ChildDied(str(exc)) from None
        self._child = child
        params = {"protocol_versions": list(codec.PROTOCOL_VERSIONS), "turnspec": codec.turnspec_version()}
        result = self._exchange(child, "hello", params)
        version = result.get("protocol_version")
        if version not in codec.PROTOCOL_VERSIONS:
            self._drop(child)
            offered = ", ".join(map(str, codec.PROTOCOL_VERSIONS))
            raise ProtocolError(f"hello: the child chose protocol version {version!r}; the host offered {offered}")
        adapter = result.get("adapter")
        if not isinstance(adapter, dict):
            self._drop(child)
            raise ProtocolError("hello: the answer's `adapter` is not an object")
        if not self.info:
            self.info = adapter
            self.name = str(adapter.get("name") or "exec")

    def _drop(self, child: process.Child) -> None:
        child.stop()
        if self._child is child:
            self._child = None

    # -- calls ---------------------------------------------------------------------------

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of `op`, or the typed error raised; an `ExecFault` (noted for the run,
        `take_faults`) when no usable answer came."""
        try:
            return self._call(op, params)
        except ExecFault as exc:
            if len(self._faults) < MAX_FAULTS_KEPT:
                self._faults.append(str(exc))
            if not isinstance(exc, GaveUp):
                self._last_fault = str(exc).removeprefix(f"{self.config.label}: ")
            raise

    def _call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        if self._gave_up is not None:
            raise GaveUp(self._gave_up)
        if self._child is None:
            self._restart()
        child = self._child
        assert child is not None
        self._close_abandoned(child)
        return self._exchange(child, op, params)

    def _restart(self) -> None:
        if self._restarts >= MAX_RESTARTS:
            last = f"; the last fault: {self._last_fault}" if self._last_fault else ""
            self._gave_up = (
                f"{self.config.label}: gave up after {MAX_RESTARTS} restarts in a row (the child keeps failing){last}"
            )
            raise GaveUp(self._gave_up)
        self._restarts += 1
        self._spawn()

    def wait_for(self, op: str) -> float:
        """How long an answer to `op` may take: the per-call timeout, and for `hello` at least
        `START_WAIT_S`, since a process's start (an interpreter, a JIT, node loading its
        modules) on a loaded CI machine takes longer than any call."""
        return max(self.config.timeout, START_WAIT_S) if op == "hello" else self.config.timeout

    def _exchange(self, child: process.Child, op: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = next(self._ids)
        request = {"id": rid, "op": op, "params": params}
        if self.config.validate:
            self._validate("request.json", request, f"the host's {op} request", "")
        try:
            line = jsonio.dumps(request)
        except (TypeError, InputError) as exc:  # a value the suite handed over that is no JSON
            raise TypeError(f"exec: the {op} request holds a value that is not JSON: {exc}") from None
        try:
            started = time.monotonic()
            child.send(line, wait := self.wait_for(op))  # the call's one deadline: writing, then the answer
            raw = child.receive(wait - (time.monotonic() - started))
        except process.Timeout:
            stderr = child.stderr_tail()
            self._drop(child)
            raise with_stderr(
                CallTimedOut(
                    f"{self.config.label}: no answer to `{op}` within {wait:g} s; "
                    f"stopped the child (SIGTERM, then SIGKILL) and restarted it{stderr_clause(stderr)}"
                ),
                stderr,
            ) from None
        except process.ChildFault as exc:
            status = child.status()
            stderr = child.stderr_tail()
            self._drop(child)
            raise with_stderr(
                ChildDied(
                    f"{self.config.label}: the child ended during `{op}` ({exc}; {status}){stderr_clause(stderr)}"
                ),
                stderr,
            ) from None
        answer = self._answer(child, op, rid, raw)
        if op != "hello":  # a child that answers its hello and dies on every call still keeps dying
            self._restarts = 0
        logs = answer.get("logs")
        replay(self.name, logs if isinstance(logs, list) else [])
        if answer.get("ok") is True:
            result = answer.get("result")
            assert isinstance(result, dict)  # `_answer` checked it
            return dict(result)
        error = answer["error"]
        failure = codec.error_from_json(error, lambda m: OperationNotOffered(op, m))
        if isinstance(error.get("events"), list):  # a stream's failure: the events before it
            failure.exec_events = error["events"]  # type: ignore[attr-defined]
        raise failure

    def _answer(self, child: process.Child, op: str, rid: int, raw: bytes) -> dict[str, Any]:
        """The answer line parsed and checked; a `ProtocolError` (the child restarted) else."""
        where = f"the answer to `{op}` (child output line {child.lines_read})"
        try:
            answer = jsonio.parse(raw)
        except ValueError as exc:
            self._protocol(child, f"{where}: not JSON ({exc}): {quoted_line(raw)}{STDOUT_HINT}")
        if not isinstance(answer, dict):
            self._protocol(child, f"{where}: a JSON {type(answer).__name__}, not an object")
        if answer.get("id") != rid:
            self._protocol(child, f"{where}, at /id: answers id {answer.get('id')!r}, the request was {rid}")
        if self.config.validate:
            self._validate("answer.json", answer, where, "", child)
            if answer.get("ok") is True:
                self._validate(RESULT_SCHEMAS[op], answer["result"], where, "/result", child)
        ok = answer.get("ok")
        if ok is True and not isinstance(answer.get("result"), dict):
            self._protocol(child, f"{where}, at /result: `ok` is true and `result` is no object")
        if ok is False and not isinstance(answer.get("error"), dict):
            self._protocol(child, f"{where}, at /error: `ok` is false and `error` is no object")
        if ok is not True and ok is not False:
            self._protocol(child, f"{where}, at /ok: {ok!r}, not true or false")
        logs = answer.get("logs", [])
        if not isinstance(logs, list) or not all(isinstance(r, dict) for r in logs):
            self._protocol(child, f"{where}, at /logs: not a list of log records")
        return answer

    def _protocol(self, child: process.Child, message: str) -> NoReturn:
        self._drop(child)  # stopped first: its stderr is then read to the end
        stderr = child.stderr_tail()
        said = stderr_clause(stderr) if stderr.strip() else ""  # what it wrote to stderr, when anything
        raise with_stderr(ProtocolError(f"{self.config.label}: protocol error in {message}{RESTARTED}{said}"), stderr)

    def _validate(self, schema: str, value: Any, where: str, prefix: str, child: process.Child | None = None) -> None:
        v = self._validators.get(schema)
        if v is None:
            # function-level: the validators load only with --validate-protocol
            from ...core.schema_validation import SchemaValidator
            from ...core.schemas import schema_set

            v = self._validators[schema] = SchemaValidator(schema_set("exec", "v1"), schema)
        if v.is_valid(value):
            return
        e = v.errors(value)[0]
        message = f"{where}, at {prefix}{e.pointer or ''}: off {schema}: {e.message[:200]}"
        if child is None:  # the host's own request: the call fails, the child is fine
            raise ProtocolError(f"{self.config.label}: --validate-protocol: {message}")
        self._protocol(child, message)

    # -- streams, faults, the end --------------------------------------------------------

    def abandon(self, stream_id: str) -> None:
        """A stream the harness stopped reading: closed with `abandon` before the next call.
        Safe from a finalizer (it only notes the id)."""
        self._abandoned.append(stream_id)

    def _close_abandoned(self, child: process.Child) -> None:
        while self._abandoned:
            sid = self._abandoned.pop()
            try:
                self._exchange(child, "stream_close", {"stream_id": sid, "abandon": True})
            except ExecFault:
                raise
            except Exception:  # the abandoned stream's own error: nobody reads it
                continue

    def take_faults(self) -> list[str]:
        """The faults since the last call of this (each a case's reason), for the runner."""
        out, self._faults = self._faults, []
        return out

    def shutdown(self) -> str:
        """`shutdown` answered (validated like any call), then how the child ended: `exit
        status 0` is what the protocol asks."""
        child = self._child
        if child is None:
            return "no child running"
        self._exchange(child, "shutdown", {})
        self._child = None
        child.end_input(SHUTDOWN_WAIT_S)
        status = child.status(0)
        return status if status == "exit status 0" else status + stderr_clause(child.stderr_tail())

    def close(self) -> None:
        """`shutdown`, then the child's input closed; it is stopped if it lingers."""
        child, self._child = self._child, None
        if child is None:
            return
        try:
            wait = min(self.config.timeout, SHUTDOWN_WAIT_S)
            child.send(jsonio.dumps({"id": next(self._ids), "op": "shutdown", "params": {}}), wait)
            child.receive(wait)
        except Exception:  # a child that cannot say goodbye is stopped all the same
            pass
        child.end_input(SHUTDOWN_WAIT_S)
