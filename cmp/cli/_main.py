"""The program: arguments parsed, the command run, its exit status; a stop signal is exit 128 + N."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Sequence

from cmp.cli._args import CONSOLE_PROG, build_parser
from cmp.cli._check import run_check
from cmp.cli._fmt import run_fmt
from cmp.cli._lint import run_lint
from cmp.cli._output import Output, error_line, silence_stdout
from cmp.cli._signals import Stopped
from cmp.cli._status import EXIT_USAGE


def _run_conformance(args: argparse.Namespace, out: Output) -> int:
    # Imported for this command only: the runner brings subprocess, selectors and the
    # vector loader, which every check and fmt would otherwise load at start-up.
    from cmp.cli._conformance import run_conformance

    return run_conformance(args, out)


_COMMANDS: dict[str, Callable[[argparse.Namespace, Output], int]] = {
    "check": run_check,
    "fmt": run_fmt,
    "conformance": _run_conformance,
    "lint": run_lint,
}


def main(argv: Sequence[str] | None = None, prog: str = CONSOLE_PROG) -> int:
    """Run the command line ``argv`` (default: this process's arguments); the exit status."""
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    command = _COMMANDS.get(args.command)  # None when no subcommand was given
    if command is None:
        parser.print_help()
        return EXIT_USAGE
    out = Output(sys.stdout)
    try:
        status = command(args, out)
    except KeyboardInterrupt:
        error_line("interrupted")
        return 128 + signal.SIGINT
    except Stopped as exc:
        error_line("interrupted" if exc.signum == signal.SIGINT else f"stopped by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    if out.lost:
        error_line("standard output is closed; results were not all written")
        if sys.stdout is not None:
            silence_stdout()
        return max(status, EXIT_USAGE)
    return status


def main_exit(prog: str = CONSOLE_PROG) -> None:
    """Entry point of the ``core-memory-packet`` console script, and of ``python -m cmp`` with its own ``prog``."""
    sys.exit(main(prog=prog))
