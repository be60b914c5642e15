"""Ctrl-C at any moment of a run is one line and exit 130 (issue #26, C17): while the
package loads, while the arguments are parsed, and while the command runs.

The interrupt is delivered at a chosen point (an import hook, or a wrapped parse), so
each moment is hit every time; a real SIGINT goes to the real process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.packets import encode, full
from tests.support.signals import default_stop_signals

# A child that interrupts itself at ``MOMENT``, then starts the program as the console
# script does (``ENTRY`` console) or as ``python -m cmp`` does (``ENTRY`` module).
CHILD = """
import importlib.abc, os, signal, sys
moment, entry, path = sys.argv[1:4]

def interrupt():
    os.kill(os.getpid(), signal.SIGINT)

if moment.startswith("import "):
    module = moment.split()[1]
    class InterruptOnImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == module:
                interrupt()
            return None
    sys.meta_path.insert(0, InterruptOnImport())
elif moment.startswith("parse"):
    import argparse
    parse = argparse.ArgumentParser.parse_known_args  # what every parse_args calls, the CLI's own too
    def interrupted_parse(self, *args, **kwargs):
        interrupt()
        return parse(self, *args, **kwargs)
    argparse.ArgumentParser.parse_known_args = interrupted_parse

options = ["--quiet"] if moment == "parse with an option" else []
sys.argv = ["core-memory-packet", "check", *options, path]
if entry == "console":
    from cmp.cli import main_exit
    main_exit()
else:
    import runpy
    runpy.run_module("cmp", run_name="__main__", alter_sys=True)
"""

MOMENTS = [
    "import cmp._patterns",
    "import cmp._pipeline",
    "import cmp.cli._main",
    "import cmp.cli._check",
    "parse",
    "parse with an option",
]


@pytest.mark.parametrize("entry", ["console", "module"])
@pytest.mark.parametrize("moment", MOMENTS)
def test_ctrl_c_while_the_program_starts_is_one_line(tmp_path: Path, moment: str, entry: str) -> None:
    packet = tmp_path / "p.json"
    packet.write_bytes(encode(full()))
    result = subprocess.run(
        [sys.executable, "-c", CHILD, moment, entry, str(packet)],
        capture_output=True,
        timeout=60,
        preexec_fn=default_stop_signals,  # SIGINT's default handler even in the background
    )
    assert (result.returncode, result.stdout, result.stderr) == (130, b"", b"cmp: interrupted\n")
