"""`turnspec wire render|parse`: a shell over conformance.adapters.debug."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ...core import escaping
from ...core.errors import InputError
from ...core.jsonio import read_input

if TYPE_CHECKING:
    from ...adapters.debug import RenderRefused


class _Stderr(logging.Handler):
    """Writes to whatever sys.stderr is at emit time."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(escaping.text_line(self.format(record)) + "\n")  # a block type is data


@contextlib.contextmanager
def _stderr_warnings() -> Iterator[None]:
    """Adapters' WARN lines (dropped blocks) go to stderr, so stdout stays pure JSON."""
    handler = _Stderr(logging.WARNING)
    handler.setFormatter(logging.Formatter("turnspec: %(levelname)s %(message)s"))
    logger = logging.getLogger("turnspec.adapters")
    old = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = old


def _refused(exc: RenderRefused) -> NoReturn:
    """A conversation the adapter refused to render, at the line of the message it first
    failed on: its classified refusal (an AdapterError, exit 1), or a mistake of the adapter
    on input the schemas accept (exit 2, named)."""
    # imported when the command runs: adapters are not loaded for other commands
    from ...adapters.base import AdapterError

    error = exc.error
    if isinstance(error, AdapterError):
        line = f"turnspec: {exc.where}: {type(error).__name__} ({error.error_class}): {error}"
        sys.stderr.write(escaping.text_line(line) + "\n")
        raise typer.Exit(1) from None
    raise InputError(
        f"{exc.where}: the adapter could not render these messages "
        f"({type(error).__name__}: {error}); run `turnspec validate` on the file"
    ) from None


MAX_BODY_BYTES = 64 * 1024 * 1024


def _read_body(path: Path) -> bytes:
    """A response body from a regular file or stdin ('-'), bounded (`jsonio.read_input`), as
    its bytes: only a framing whose frames are text decodes them (a binary stream, such as
    AWS event-stream, is not UTF-8)."""
    return read_input(path, limit=MAX_BODY_BYTES)


def register(app: typer.Typer) -> None:
    wire = typer.Typer(
        help="Render canonical messages to a provider request, or parse a provider response.",
        no_args_is_help=True,
    )
    app.add_typer(wire, name="wire")
    wire.command()(render)
    wire.command()(parse)
    wire.command()(record)
    wire.command("list")(list_apis)
    wire.command()(show)


AdapterRef = Annotated[str, typer.Option("--adapter", "-a", help="Registered adapter name or module:attr")]
"""The adapter option every wire command takes (declared once)."""


def render(
    conversation: Annotated[
        Path,
        typer.Argument(help="Canonical messages (.jsonl or .json); tool definitions may be mixed in"),
    ],
    adapter: AdapterRef,
    model: Annotated[
        str | None,
        typer.Option(help="Canonical model id (default: the latest assistant turn's of this provider)"),
    ] = None,
    stream: Annotated[bool, typer.Option(help="Render a streaming request")] = False,
    max_tokens: Annotated[int | None, typer.Option(help="max output tokens")] = None,
) -> None:
    """Print the wire request (method, path, headers, body) the adapter builds."""
    # imported when the command runs: adapters and vcrpy are not loaded for other commands
    from ...adapters import debug, registry

    a = registry.load(adapter)
    conv = debug.read_conversation(conversation)
    try:
        with _stderr_warnings():
            out = debug.render(a, conv, model=model, stream=stream, max_tokens=max_tokens)
    except debug.RenderRefused as exc:
        _refused(exc)
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def parse(
    response: Annotated[
        Path,
        typer.Argument(help="Response body (JSON) or a stream (SSE, NDJSON, event-stream...); '-' reads stdin"),
    ],
    adapter: AdapterRef,
    stream: Annotated[
        bool,
        typer.Option(
            help="Treat the input as a stream in the API's framing (detected when it starts as SSE or an event-stream)"
        ),
    ] = False,
    status: Annotated[int, typer.Option(help="HTTP status the body came with (error bodies are classified)")] = 200,
    framing: Annotated[
        str | None,
        typer.Option(help="A registered framing (sse, ndjson, json-array, aws-event-stream, ...); implies --stream"),
    ] = None,
) -> None:
    """Print the canonical message (for streams, the canonical events as JSON lines first)."""
    # imported when the command runs: adapters and vcrpy are not loaded for other commands
    from ...adapters import debug, registry
    from ...adapters.base import AdapterError, WireFormatError
    from ...wire import registry as wire_registry

    a = registry.load(adapter)
    name = "<stdin>" if str(response) == "-" else str(response)
    try:
        chosen = wire_registry.get_framing(framing) if framing is not None else None
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from None
    body = _read_body(response)
    try:
        with _stderr_warnings():
            parsed = debug.parse(a, body, stream=stream, status=status, framing=chosen)
    except WireFormatError as exc:
        where = f"{exc.location}: " if exc.location else ""
        sys.stderr.write(escaping.text_line(f"turnspec: {name}: {where}{exc}") + "\n")
        raise typer.Exit(1) from None
    except AdapterError as exc:
        # an error body is classified, as asked: the class is the output, the line says so
        sys.stdout.write(
            json.dumps({"error_class": exc.error_class, "error": type(exc).__name__, "message": str(exc)}) + "\n"
        )
        line = f"turnspec: {name}: HTTP {status}: {type(exc).__name__} ({exc.error_class}): {exc}"
        sys.stderr.write(escaping.text_line(line) + "\n")
        raise typer.Exit(1) from None
    except InputError as exc:
        raise InputError(f"{name}: {exc}") from None
    for ev in parsed.events:
        sys.stdout.write(json.dumps(ev, ensure_ascii=False) + "\n")
    if parsed.message is not None:
        sys.stdout.write(json.dumps(parsed.message, ensure_ascii=False, indent=None if parsed.events else 2) + "\n")
    if parsed.error is not None:
        failed = parsed.error
        line = (
            f"turnspec: {name}: the provider reported an error in the stream (HTTP {status}), after "
            f"{len(parsed.events)} event(s) of partial content: "
            f"{type(failed).__name__} ({failed.error_class}): {failed}"
        )
        sys.stderr.write(escaping.text_line(line) + "\n")
        raise typer.Exit(1)


def list_apis() -> None:
    """List every wire API the suite knows: name, title, stream framing."""
    from ...wire import describe, registry  # loaded when the command runs

    sys.stdout.write(describe.index(registry.APIS))


def show(
    name: Annotated[str, typer.Argument(help="A wire API's name (`turnspec wire list`)")],
) -> None:
    """Print what the suite expects of an adapter of one wire API: endpoint, stop reasons, usage, errors."""
    from ...suite.runner import recorded_folders  # loaded when the command runs
    from ...wire import describe, registry

    folders = recorded_folders()
    try:
        api = registry.get(name)
    except KeyError as exc:
        # a provider's or adapter's name is often a cassette folder's (`anthropic`): name the
        # wire APIs whose exchanges it holds (an outside author typed `wire show anthropic`)
        held = sorted(a for a, counts in folders.items() if name in counts)
        hint = f"; turnspec's cassette folder {name!r} holds exchanges of: {', '.join(held)}" if held else ""
        raise InputError(str(exc.args[0]) + hint) from None
    sys.stdout.write(describe.describe(api, folders.get(api.name, {})))


def record(
    conversation: Annotated[Path, typer.Argument(help="Canonical messages (.jsonl or .json) to send")],
    cassette: Annotated[Path, typer.Argument(help="Cassette to append the exchange to (vcrpy YAML)")],
    adapter: AdapterRef,
    model: Annotated[str | None, typer.Option(help="Canonical model id")] = None,
    stream: Annotated[bool, typer.Option(help="Record a streaming response")] = False,
    max_tokens: Annotated[int | None, typer.Option(help="max output tokens")] = None,
    base_url: Annotated[str | None, typer.Option(help="Provider base URL (default: the API's)")] = None,
    key_env: Annotated[str | None, typer.Option(help="Environment variable holding the API key")] = None,
) -> None:
    """Send the rendered request to the provider and record it (auth, account ids scrubbed)."""
    # imported when the command runs: adapters and vcrpy are not loaded for other commands
    from ...adapters import debug, registry
    from ...adapters.base import AdapterOptions
    from ...suite.record import record as do_record

    a = registry.load(adapter)
    conv = debug.read_conversation(conversation)
    with _stderr_warnings():
        options = AdapterOptions(
            model=model or debug.default_model(a, conv.messages),
            stream=stream,
            max_output_tokens=max_tokens,
        )
        try:
            req = debug.to_wire(a, conv, options)
        except debug.RenderRefused as exc:
            _refused(exc)
    status = do_record(req, str(a.wire_api), cassette, base_url=base_url, key_env=key_env)
    sys.stderr.write(f"recorded HTTP {status} into {cassette}\n")
