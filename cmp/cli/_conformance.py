"""``conformance``: the vectors run against this library or another implementation (--impl).

The runner is :mod:`cmp.conformance`; this is the command around it."""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from cmp._toolkit import describe, display_name, one_line
from cmp.cli._args import DEFAULT_VECTORS_TEXT
from cmp.cli._output import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Output, error_line
from cmp.cli._signals import StopSignals
from cmp.conformance import (
    Implementation,
    VectorError,
    default_vector_dir,
    load_vectors,
    report,
    run,
    split_command,
)

# No vector needs a day.
MAX_TIMEOUT_SECONDS = 86_400.0


def _timeout_problem(timeout: float) -> str | None:
    """Why --timeout is unusable: NaN, infinities and huge values break the deadline arithmetic."""
    if math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_SECONDS:
        return None
    return f"--timeout must be positive and at most {MAX_TIMEOUT_SECONDS:g} seconds (one day), not {timeout:g}"


def _open_stderr(target: str | None) -> int | None:
    """The Popen stderr for --impl-stderr: DEVNULL, None (ours) or a file opened once for appending,
    without blocking so a FIFO with no reader fails at once. OSError if it cannot be opened."""
    if target is None:
        return subprocess.DEVNULL
    if target == "-":
        return None
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
    fd = os.open(target, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0), 0o666)
    os.set_blocking(fd, True)
    return fd


def _unstartable(program: str) -> str | None:
    """Why ``program`` (--impl's first word) cannot be started at all, or None: else every vector
    fails alike, a report of hundreds of lines for one mistake in the command."""
    if shutil.which(program) is not None:
        return None
    if os.sep not in program and not (os.altsep and os.altsep in program):
        return "no such program on PATH"
    if os.path.isdir(program):
        return "it is a folder"
    if not os.path.exists(program):
        return "no such file"
    return "not executable (chmod +x it, or name its interpreter first, like 'sh adapter.sh')"


def _run_vectors(args: argparse.Namespace, write: Callable[[str], None], stop: StopSignals) -> int:
    """Run the vectors and ``write`` the report; a usage or vector-folder problem is one line on stderr,
    exit 2. The implementation starts inside ``stop``'s ``deferred``."""
    problem = _timeout_problem(args.timeout)
    if problem:
        error_line(problem)
        return EXIT_USAGE
    argv: list[str] | None = None
    if args.impl is not None:
        try:
            argv = split_command(args.impl)
        except ValueError as exc:
            error_line(str(exc))
            return EXIT_USAGE
        unstartable = _unstartable(argv[0])
        if unstartable is not None:
            error_line(one_line(f"--impl: cannot start {display_name(argv[0])}: {unstartable}"))
            return EXIT_USAGE
    folder = Path(args.vectors) if args.vectors else default_vector_dir()
    if folder is None:
        error_line(f"no conformance vectors found (looked for {DEFAULT_VECTORS_TEXT}); pass --vectors DIR")
        return EXIT_USAGE
    try:
        vectors = load_vectors(folder, args.filter)
    except VectorError as exc:
        error_line(one_line(f"conformance: {exc}"))
        return EXIT_USAGE
    implementation: Implementation | None = None
    opened: int | None = None
    if argv is not None:
        try:
            stderr = _open_stderr(args.impl_stderr)
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            error_line(one_line(f"--impl-stderr: cannot open {display_name(args.impl_stderr)}: {describe(exc)}"))
            return EXIT_USAGE
        opened = stderr if stderr is not None and stderr >= 0 else None
        implementation = Implementation(argv, args.timeout, stderr, starting=stop.deferred)
    try:
        results = run(vectors, implementation)
    finally:
        if opened is not None:
            os.close(opened)
    report(results, args.format, write)
    return EXIT_OK if all(r.passed for r in results) else EXIT_FAIL


def run_conformance(args: argparse.Namespace, out: Output) -> int:
    # A stop signal becomes Stopped where the runner is, so its cleanup kills the
    # implementation's process group instead of leaving it running without us.
    with StopSignals() as stop:
        # Its JSON output is one multi-line document; its text output, lines like ours.
        return _run_vectors(args, out.document if args.format == "json" else out.line, stop)
