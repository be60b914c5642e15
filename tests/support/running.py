"""A CLI run under way: started, with its first results out, for tests that change the world under it."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Sequence


def under_way(*args: str, launcher: Sequence[str] = ("-m", "cmp")) -> tuple[subprocess.Popen[bytes], bytes]:
    """``python -m cmp ARGS`` (or ``python LAUNCHER... ARGS``) started with piped output, once
    its first results are out (what they were, read off the pipe). Left unread, the pipe
    then holds the run up."""
    run = subprocess.Popen([sys.executable, *launcher, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert run.stdout is not None
    ready, _, _ = select.select([run.stdout], [], [], 120)
    if not ready:
        run.kill()
        run.wait()
        raise AssertionError(f"no result within 120 s: {args}")
    return run, os.read(run.stdout.fileno(), 65536)
