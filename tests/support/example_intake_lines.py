"""The two lines examples/intake-app/app.py gives for running it: its install line and its serve line.

They are the indented lines of its docstring, a ``#`` comment after each left out;
tests/unit/test_install_lines.py checks what they say, tests/integration/test_install_lines.py runs them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_APP = ROOT / "examples" / "intake-app" / "app.py"


def example_commands() -> tuple[str, str]:
    """``(install, serve)``: the first two indented lines of the example's docstring."""
    docstring = ast.get_docstring(ast.parse(EXAMPLE_APP.read_text(encoding="utf-8"))) or ""
    commands = [line.split("  #", 1)[0].strip() for line in docstring.splitlines() if line.startswith("    ")]
    install, serve = commands[:2]
    return install, serve
