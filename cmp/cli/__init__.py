"""The command line: ``core-memory-packet COMMAND`` (also ``python -m cmp``); docs/cli.md has every command.

There is no ``cmp`` console script: that name is POSIX cmp(1).

Every result is rendered from the same Report/Finding/Redaction objects the library
returns. Exit codes: 0 every file accepted, 1 any not, 2 a usage error, an unreadable
file (the other files are still processed), a file ``fmt --write`` could not or would
not rewrite, or worker processes that failed; 128 + N when stopped by signal N.
Text output is one result per physical line (:func:`~cmp.cli._output.render_line`).

Data flows one way through the modules, each one concern: arguments, then sources, then
judging (here, in worker processes or on a Dask cluster), then rendering, then writing.
Their layers are docs/architecture.md's, held by tests/unit/test_layers.py.
"""

from __future__ import annotations

from cmp.cli._args import CONSOLE_PROG, MODULE_PROG, build_parser
from cmp.cli._main import main, main_exit
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, render_line

__all__ = [
    "CONSOLE_PROG",
    "EXIT_FAIL",
    "EXIT_OK",
    "EXIT_USAGE",
    "MODULE_PROG",
    "build_parser",
    "main",
    "main_exit",
    "render_line",
]
