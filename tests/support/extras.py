"""Optional dependencies of the tests (the ``test`` extra): skipped without them, except under CI.

A venv with only the core dependencies, pytest and hypothesis collects and runs the suite,
skipping what needs an extra. Under CI (``CI`` set, as ``.ci/run`` does) the test extra is
installed, so a missing one fails instead of skipping: a broken environment never passes
by testing less.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def require(name: str, minversion: str | None = None, python: tuple[int, int] | None = None) -> ModuleType:
    """The module ``name`` (at least ``minversion``); without it, a skip of the test or module asking.
    ``python``: the test extra installs it from that Python on, so below it a skip even under CI."""
    if python is not None and sys.version_info < python:
        pytest.skip(f"the test extra installs {name} from Python {python[0]}.{python[1]} on")
    try:
        return pytest.importorskip(name, minversion=minversion)
    except pytest.skip.Exception as missing:
        if IN_CI:
            pytest.fail(f"{missing}: under CI the test extra is installed (pip install -e '.[test]')", pytrace=False)
        raise
