"""The `turnspec` console script (`[project.scripts]` in pyproject.toml).

`turnspec --version` (and `turnspec version`) is answered here, from the package's own
version, before the command line interface is imported: it needs nothing else. Every
other command runs `conformance.cli.main`, which loads what that command needs.
"""

from __future__ import annotations

import sys

from . import __version__

_VERSION_ARGS = (["--version"], ["version"])


def main(argv: list[str] | None = None) -> int:
    """Entry point of `turnspec`: the same exit codes and messages as `conformance.cli.main`."""
    args = sys.argv[1:] if argv is None else argv
    if args in _VERSION_ARGS:
        try:
            sys.stdout.write(f"turnspec {__version__}\n")
            sys.stdout.flush()
            return 0
        except OSError:
            pass  # standard output failed (a full disk, a closed pipe): the CLI reports it its way
    try:
        from .cli import main as run  # loaded only when this command runs (every command but the version)
    except KeyboardInterrupt:  # Ctrl-C while the CLI loads: nothing ran yet, so nothing was kept
        sys.stderr.write("turnspec: interrupted\n")
        return 130
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
