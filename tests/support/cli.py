"""The command line as the tests run it: ``python -m cmp`` in a subprocess, or ``cmp.cli.main`` in process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from cmp.cli import main


def run_cli(
    *args: str,
    input: bytes | str | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    text: bool = False,
    timeout: float = 120,
) -> subprocess.CompletedProcess[Any]:
    """``python -m cmp ARGS`` with the test interpreter, its output captured (bytes, or str with ``text``).

    Its standard input is ``input``, or empty: never the test run's own. Bounded in time, so
    that a hang fails the test instead of holding up the run.
    """
    if input is None:
        input = "" if text else b""
    return subprocess.run(
        [sys.executable, "-m", "cmp", *args],
        input=input,
        capture_output=True,
        text=text,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def run_main(capture: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, bytes]:
    """``cmp.cli.main(ARGS)`` in this process: its exit status, and what it wrote to stdout and stderr
    as ``capture`` (``capsysbinary``) read them."""
    status = main(list(args))
    captured = capture.readouterr()
    return status, captured.out, captured.err
