"""How a command's run ends: each way it can end becomes an exit code and at most one line.

0 valid (warnings allowed), 1 violations (the command's own code), 2 a usage or input
error (`InputError`, click's usage errors, a value no choice of an option matches, a
failed standard output), 130 an interrupt (Ctrl-C), 3 an internal error: never a traceback.
"""

from __future__ import annotations

import enum
import io
import sys
from collections.abc import Callable

import typer
from typer import _click as click  # typer vendors click: its classes are the ones typer builds
from typer.core import TyperOption

from ..core import escaping
from ..core.errors import InputError
from .streams import StdoutError, discard_stdout, error, stdout_failed

__all__ = ["run"]


def run(command_for: Callable[[list[str] | None], click.Command], argv: list[str] | None) -> int:
    """Run the command `command_for(argv)` builds on `argv`, and return its exit code, every
    expected failure turned into one line on standard error."""
    try:
        rc = command_for(argv).main(args=argv, prog_name="turnspec", standalone_mode=False)
        if rc == 130:  # typer's answer to a KeyboardInterrupt (Ctrl-C) inside a command
            return _interrupted(argv)
        return rc if isinstance(rc, int) else 0
    except typer.Exit as e:
        return int(e.exit_code)
    except InputError as e:
        error(str(e))
        return 2
    except KeyboardInterrupt:
        return _interrupted(argv)
    except BrokenPipeError:  # `turnspec ... | head`: stop quietly, and let exit's final flush go nowhere
        discard_stdout()
        return 0
    except StdoutError as e:
        return stdout_failed(e)
    except Exception as e:  # usage errors and anything unexpected: a message, never a traceback
        # typer vendors click; its usage errors are recognised by their interface
        choice = _choice_error(e)
        if choice is not None:
            error(choice)
            return 2
        show = getattr(e, "show", None)
        if callable(show) and isinstance(getattr(e, "exit_code", None), int):
            shown = io.StringIO()
            show(file=shown)  # click quotes what it echoes; escaped all the same, as every stderr line
            sys.stderr.write(escaping.lines(shown.getvalue()))
            return 2
        if type(e).__name__ == "Abort":
            return _interrupted(argv)
        return _internal(e)


def _interrupted(argv: list[str] | None) -> int:
    """Ctrl-C (SIGINT): one line saying so (and, for a run keeping its parts, that the same
    command goes on from them), exit 130 as shells do (128 + SIGINT)."""
    args = sys.argv[1:] if argv is None else argv
    kept = any(a == "--resume" or a.startswith("--resume=") for a in args)
    more = "; the parts finished so far are kept: run the same command again to go on" if kept else ""
    error(f"interrupted{more}")
    return 130


def _choice_error(e: Exception) -> str | None:
    """`--output: 'xml' is not one of text, json`: one line for a value an option of fixed
    choices (an enum) does not take, naming the real choices; None for any other error."""
    param = getattr(e, "param", None)
    if type(e).__name__ != "BadParameter" or not isinstance(param, TyperOption):
        return None
    kind = param.type_descriptor.annotation
    if not (isinstance(kind, type) and issubclass(kind, enum.Enum)):
        return None
    # typer checks the value with pydantic: the error it raises from holds the value given
    errors = getattr(e.__cause__, "errors", None)
    given = [x.get("input") for x in errors()] if callable(errors) else []
    if not given or not isinstance(given[0], str):
        return None
    flag = max((o for o in param.opts if o.startswith("--")), key=len, default=param.opts[0])
    return f"{flag}: {given[0]!r} is not one of {', '.join(str(m.value) for m in kind)}"


def _internal(e: Exception) -> int:
    error(f"internal error: {type(e).__name__}: {e} (please report this)")
    return 3
