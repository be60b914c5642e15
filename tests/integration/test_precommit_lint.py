"""The cmp-lint hook, run by the real pre-commit in a repository that keeps a baseline (issue 47,
item 11): the key the baseline knows passes, a new one fails alone."""

from __future__ import annotations

from pathlib import Path

import cmp
from tests.integration.test_precommit import _git, _pointed_here, _repository, _run, home  # noqa: F401
from tests.support.cli import run_cli
from tests.support.packets import encode, full, put
from tests.unit.test_redaction import AWS

CONFIG = "repos:\n  - repo: HERE\n    rev: HEAD\n    hooks:\n      - id: cmp-lint\n"


def _packet(text: str) -> bytes:
    return cmp.dumps(cmp.loads(encode(put(full(), "constraints[0]", text)))) + b"\n"


def test_the_lint_hook_passes_on_the_keys_its_repository_s_baseline_knows(tmp_path: Path, home: Path) -> None:  # noqa: F811
    repository = _repository(
        tmp_path / "repo",
        {
            ".pre-commit-config.yaml": _pointed_here(CONFIG).encode(),
            "pyproject.toml": b'[tool.core-memory-packet]\nbaseline = ".cmp-baseline.json"\n',
            "packets/known.json": _packet(f"The key {AWS} is old."),
        },
    )
    written = run_cli("baseline", "packets", cwd=repository, text=True)
    assert written.returncode == 0 and (repository / ".cmp-baseline.json").is_file(), written.stderr
    _git(repository, "add", "-A")
    first = _run(repository, home)
    assert first.returncode == 0, first.stdout + first.stderr
    (repository / "packets" / "new.json").write_bytes(_packet("The key AKIAIOSFODNN7EXAMPLF is new."))
    _git(repository, "add", "-A")
    second = _run(repository, home)
    output = second.stdout + second.stderr
    assert second.returncode == 1, output
    failing = [line for line in output.splitlines() if ": redaction " in line]
    assert len(failing) == 1 and failing[0].startswith("packets/new.json:"), output
    assert AWS[4:] not in output and "AKIAIOSFODNN7EXAMPLF"[4:] not in output
