"""Settings every test shares: one hypothesis profile, and the markers a test gets from what it is.

Property tests run generated packets through whole pipelines, whose first call can be
slow (schemas compiled, patterns built), so no example has a deadline and slow data
generation is no failure. Each test still says how many examples it wants, and every
run, the quick one too, runs that many: the quick subset leaves the slowest property
tests out (they are marked ``slow``) rather than running every one of them thinner.
The one exception is CI's quick runs on the other Python versions, which take a share
of each count (``CMP_TEST_EXAMPLE_SHARE``, :mod:`tests.support.examples`).

The markers (registered in pyproject.toml, where ``--strict-markers`` refuses others):

- ``slow``: given here to every test in ``tests/cli/`` (the command line, run mostly as
  subprocesses: pipes, worker pools, signals, terminals), ``tests/server/`` (a real server on
  SQLite and PostgreSQL), ``tests/client/`` (the client against a real server over HTTP) and
  ``tests/integration/``; written
  in the other folders on the tests that start the conformance runner or an implementation
  in a subprocess, and on the property tests whose examples take a second or more.
  ``python -m pytest -m "not slow"`` is the quick subset: the unit, property and
  conformance tests left, in about a minute (tests/cli and tests/integration are then
  not collected at all: :func:`pytest_ignore_collect`). ``python -m pytest`` runs everything.
- ``integration``, given here to every test in ``tests/integration/``: the real MCP SDK
  client, FastAPI's test client, a Dask cluster, pre-commit, a built wheel, Node.
- ``property``, given here to every hypothesis test, wherever its file is.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("cmp", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cmp")

# The suite starts thousands of Python processes (python -m cmp, adapters, pools). Where the
# environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE, set on some CI machines),
# each of them would compile every module it imports again, a third of a CLI start-up
# here; a cache folder of this test process's own lets its children share the bytecode
# instead. The test process itself is unchanged (it read the variable when it started).
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) and "PYTHONPYCACHEPREFIX" not in os.environ:
    _BYTECODE = tempfile.mkdtemp(prefix="cmp-tests-pyc-")
    atexit.register(shutil.rmtree, _BYTECODE, True)
    os.environ["PYTHONPYCACHEPREFIX"] = _BYTECODE

HERE = Path(__file__).resolve().parent
CLI, INTEGRATION, SERVER, CLIENT = HERE / "cli", HERE / "integration", HERE / "server", HERE / "client"


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    folders: dict[Path, tuple[bool, bool]] = {}  # each test file's, found once, not once a test
    for item in items:
        found = folders.get(item.path)
        if found is None:
            parents = item.path.parents
            found = folders[item.path] = (
                INTEGRATION in parents,
                CLI in parents or SERVER in parents or CLIENT in parents,
            )
        in_integration, in_cli = found
        if in_integration:
            item.add_marker(pytest.mark.integration)
        if in_cli or in_integration:
            item.add_marker(pytest.mark.slow)
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)


# The quick subset's marker expression, as the README and .ci/run write it.
QUICK_SUBSET = "not slow"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"``, tests/cli and tests/integration are not even imported.

    Every test in them is slow (above), so that expression deselects them all; importing
    their modules (the MCP SDK, Dask, FastAPI, pre-commit's helpers) only to deselect
    them took each worker of the quick subset some 5 of its 15 s of collection. Any other
    expression, or none, collects them as usual.
    """
    if (config.getoption("markexpr") or "").strip() != QUICK_SUBSET:
        return None
    if collection_path in (CLI, INTEGRATION, SERVER, CLIENT) or not {CLI, INTEGRATION, SERVER, CLIENT}.isdisjoint(
        collection_path.parents
    ):
        return True
    return None


@pytest.fixture(autouse=True)
def _no_forced_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """A FORCE_COLOR of the environment the suite runs in (CI often sets it) would colour the
    plain lines the tests compare; a test that wants it sets it itself."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)


@pytest.fixture(autouse=True)
def _no_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's settings from the environment (CMP_RULE_SET, CMP_FORMAT, ..., CMP_CONFIG) of the
    shell the suite runs in would change what the tests expect; a test that wants one sets it."""
    from cmp.cli._config import CONFIG_VARIABLE, OPTIONS

    for name in (CONFIG_VARIABLE, *(option.env for option in OPTIONS)):
        monkeypatch.delenv(name, raising=False)
