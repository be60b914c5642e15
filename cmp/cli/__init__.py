"""The command line: ``core-memory-packet check``, ``fmt``, ``lint`` and ``conformance`` (also ``python -m cmp``).

There is no ``cmp`` console script: that name is POSIX cmp(1).

Every result is rendered from the same Report/Finding/Redaction objects the library
returns. Exit codes: 0 every file accepted, 1 any not, 2 a usage error, an unreadable
file (the other files are still processed), a file ``fmt --write`` could not or would
not rewrite, or worker processes that failed; 128 + N when stopped by signal N.
Text output is one result per physical line (:func:`render_line`).

Data flows one way through the modules, each one concern; lowest first, a semicolon
between layers: ``_output`` (where the CLI writes, escaped lines), ``_progress`` (the
terminal's counter), ``_signals`` (stop signals), ``_sources`` (files, stdin, JSON
Lines: one :class:`~cmp.cli._sources.Source` each), ``_render`` (a result as text lines
or a JSON entry); ``_status`` (exit statuses), ``_judge`` (one source checked and
rendered, and one share of them), ``_rewrite`` (fmt --write's atomic replacement),
``_results`` (where a run's results go); ``_batch`` (shares judged here or in worker
processes, merged in input order), ``_args`` (the parser); ``_dask`` (the same shares on
a Dask cluster); ``_check``, ``_fmt``, ``_conformance``, ``_lint``, ``_audit`` and the
others (the commands); ``_main`` (parse, run the command, exit status).
"""

from __future__ import annotations

from cmp.cli._args import CONSOLE_PROG, MODULE_PROG, build_parser
from cmp.cli._main import main, main_exit
from cmp.cli._output import render_line
from cmp.cli._status import EXIT_FAIL, EXIT_OK, EXIT_USAGE

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
