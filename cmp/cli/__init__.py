"""The command line: ``core-memory-packet COMMAND`` (also ``python -m cmp``); docs/cli.md has every command.

There is no ``cmp`` console script: that name is POSIX cmp(1). Exit codes: 0 every file
accepted, 1 any not, 2 a usage error or a source that could not be read or written (the
others are still processed); 128 + N when stopped by signal N. The modules' layers are
docs/architecture.md's, held by tests/unit/test_layers.py.
"""

from __future__ import annotations

import gc
import signal
import sys

from cmp import _module  # names load as cmp's own do (seen by python -X importtime)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cmp.cli._args import CONSOLE_PROG, MODULE_PROG, build_parser
    from cmp.cli._main import main
    from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, render_line

# Loaded on first use (PEP 562): the entry points load the program inside their own try,
# so a Ctrl-C while it loads is one line.
_DEFINED_IN = {
    "CONSOLE_PROG": "cmp.cli._args",
    "MODULE_PROG": "cmp.cli._args",
    "build_parser": "cmp.cli._args",
    "main": "cmp.cli._main",
    "EXIT_FAIL": "cmp.cli._output",
    "EXIT_OK": "cmp.cli._output",
    "EXIT_USAGE": "cmp.cli._output",
    "render_line": "cmp.cli._output",
}


def __getattr__(name: str) -> Any:
    module = _DEFINED_IN.get(name)
    if module is None:
        raise AttributeError(f"module 'cmp.cli' has no attribute {name!r}")
    value = getattr(_module(module), name)
    globals()[name] = value
    return value


def main_exit(prog: str | None = None) -> None:
    """Entry point of the ``core-memory-packet`` console script (``prog`` None: its name)."""
    _exit(prog, "CONSOLE_PROG")


def module_exit() -> None:
    """Entry point of ``python -m cmp``: :func:`main_exit` under that name."""
    _exit(None, "MODULE_PROG")


def _load() -> Any:
    """The whole program, imported with the cyclic garbage collector off: its objects live as
    long as the process, so collecting while they are made is wasted. They are then frozen
    and the collector is on again (if it was); a test holds it on in main."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        from cmp.cli import _main
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    return _main


def _exit(prog: str | None, default: str) -> None:
    try:
        _main = _load()
        status = _main.main(prog=prog if prog is not None else getattr(_module("cmp.cli._args"), default))
    except KeyboardInterrupt:  # before main could take it: while the program loads
        if sys.stderr is not None:
            try:
                sys.stderr.write("cmp: interrupted\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
        status = 128 + signal.SIGINT
    sys.exit(status)


__all__ = [
    "CONSOLE_PROG",
    "EXIT_FAIL",
    "EXIT_OK",
    "EXIT_USAGE",
    "MODULE_PROG",
    "build_parser",
    "main",
    "main_exit",
    "module_exit",
    "render_line",
]
