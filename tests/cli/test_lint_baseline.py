"""lint judges a packet's check as check and gate do (issue 47, item 11): --baseline, the baseline
setting of the configuration file and CMP_BASELINE make a known key known, so the cmp-lint hook
passes in a repository that keeps a baseline, and fails on a new key alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import cmp
from tests.support.cli import run_cli
from tests.support.packets import encode, full, put

KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key id
OTHER = "AKIAI44QH8DHBEXAMPLE"  # its other documented example key id


def _packet(text: str) -> bytes:
    return cmp.dumps(cmp.loads(encode(put(full(), "constraints[0]", text)))) + b"\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository as the hook finds it: packets/, a baseline of their one key beside them, and a
    pyproject.toml naming it."""
    (tmp_path / "packets").mkdir()
    (tmp_path / "packets" / "known.json").write_bytes(_packet(f"The key {KEY} is old."))
    written = run_cli("baseline", "packets", "-o", ".cmp-baseline.json", cwd=tmp_path, text=True)
    assert written.returncode == 0, written.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.core-memory-packet]\nbaseline = ".cmp-baseline.json"\n')
    return tmp_path


def _env(**variables: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("CMP_")}, **variables}


def test_the_lint_hook_passes_on_a_known_key_and_fails_on_a_new_one(repo: Path) -> None:
    # as pre-commit runs the cmp-lint hook: its entry and the staged files, from the repository's root
    known = run_cli("lint", "packets/known.json", cwd=repo, env=_env(), text=True)
    assert (known.returncode, known.stdout) == (0, "packets/known.json: ok\n"), known.stdout + known.stderr
    (repo / "packets" / "new.json").write_bytes(_packet(f"The key {OTHER} is new."))
    both = run_cli("lint", "packets/known.json", "packets/new.json", cwd=repo, env=_env(), text=True)
    assert both.returncode == 1, both.stdout
    failing = [line for line in both.stdout.splitlines() if ": redaction " in line]
    assert len(failing) == 1 and failing[0].startswith("packets/new.json:"), both.stdout
    assert KEY[4:] not in both.stdout + both.stderr and OTHER[4:] not in both.stdout + both.stderr
    # a folder: the baseline the settings name is no packet of the walk
    (repo / "packets" / "new.json").unlink()
    walked = run_cli("lint", ".", cwd=repo, env=_env(), text=True)
    assert walked.returncode == 0 and ".cmp-baseline.json" not in walked.stdout + walked.stderr, walked.stdout


def test_lint_takes_the_baseline_from_the_flag_and_the_environment_as_check_does(repo: Path) -> None:
    (repo / "pyproject.toml").unlink()
    path = "packets/known.json"
    assert run_cli("lint", path, cwd=repo, env=_env()).returncode == 1  # no baseline: the key fails
    for args, env in ((("--baseline", ".cmp-baseline.json"), _env()), ((), _env(CMP_BASELINE=".cmp-baseline.json"))):
        for command in ("check", "lint"):
            result = run_cli(command, *args, path, cwd=repo, env=env, text=True)
            assert result.returncode == 0, (command, args, result.stdout + result.stderr)
    # and --format json marks the hit known, as check's does
    result = run_cli("lint", "--format", "json", "--baseline", ".cmp-baseline.json", path, cwd=repo, env=_env())
    [hit] = json.loads(result.stdout)["results"][0]["redactions"]
    assert hit["baseline"] == "unchanged"


def test_lint_lists_the_stale_entries_of_the_files_it_read(repo: Path) -> None:
    (repo / "packets" / "known.json").write_bytes(_packet("The key was rotated."))
    result = run_cli("lint", "packets/known.json", cwd=repo, env=_env(), text=True)
    assert result.returncode == 0
    [stale] = result.stderr.splitlines()
    assert stale.startswith("cmp: ") and stale.endswith(
        "/.cmp-baseline.json: stale: redaction/aws-key in packets/known.json (constraints[0]) is no longer found"
    )
