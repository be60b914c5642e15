"""The pre-commit hooks, run by the real pre-commit against this checkout (try-repo).

pre-commit builds the hooks' environment by installing this checkout with pip, from the
package index, once per checkout revision; PRE_COMMIT_HOME is shared by the tests here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import cmp
from tests.support.extras import require
from tests.support.packets import encode, full, put
from tests.unit.test_redaction import AWS

require("pre_commit")

ROOT = Path(__file__).resolve().parents[2]


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    yield tmp_path_factory.mktemp("pre-commit-home")


def _repository(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir()
    _git(folder, "init", "-q")
    _git(folder, "config", "user.email", "tests@example.org")
    _git(folder, "config", "user.name", "tests")
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    _git(folder, "add", "-A")
    return folder


def _try_repo(repository: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "--all-files", "--verbose"]
    return subprocess.run(command, cwd=repository, env=env, capture_output=True, text=True, timeout=900)


def test_the_hooks_pass_good_packets_fail_leaky_ones_masked_and_rewrite_the_rest(tmp_path: Path, home: Path) -> None:
    good = cmp.dumps(cmp.loads(encode(full()))) + b"\n"
    leaky = encode(put(full(), "constraints[0]", f"The key {AWS} is old."))
    untidy = json.dumps(full()).encode()  # conforming, one line: not canonical
    repository = _repository(
        tmp_path / "repo",
        {"good.cmp.json": good, "packets/leaky.json": leaky, "docs/untidy.cmp.json": untidy, "other.json": b"{}"},
    )
    first = _try_repo(repository, home)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert re.search(
        r"^packets/leaky\.json:1:\d+: redaction constraints\[0\]/aws-key: AKIA… \(20 chars\)", output, re.M
    )
    assert AWS[4:] not in output  # masked: the public prefix at most
    assert "docs/untidy.cmp.json: rewritten" in output
    assert "other.json" not in output  # not a packet by the naming convention
    assert (repository / "good.cmp.json").read_bytes() == good
    assert (repository / "docs" / "untidy.cmp.json").read_bytes() == cmp.dumps(cmp.loads(untidy)) + b"\n"
    # Stage the rewrite and replace the leaky packet with a scrubbed one: now every hook passes.
    clean, _ = cmp.scrub(cmp.loads(leaky))
    (repository / "packets" / "leaky.json").write_bytes(cmp.dumps(clean) + b"\n")
    _git(repository, "add", "-A")
    second = _try_repo(repository, home)
    assert second.returncode == 0, second.stdout + second.stderr


def _readme_snippet(marker: str) -> str:
    readme = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    block = readme[readme.index(marker) :]
    block = block[block.index("```yaml\n") + len("```yaml\n") :]
    return block[: block.index("\n```")] + "\n"


def test_the_readme_config_works_as_written(tmp_path: Path, home: Path) -> None:
    """docs/integrations.md's .pre-commit-config.yaml, with its repo and rev pointed at this checkout's HEAD."""
    snippet = _readme_snippet("<!-- pre-commit snippet:")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    config, swaps = re.subn(r"(?m)^(    rev: ).*$", rf"\g<1>{head.stdout.strip()}", snippet)
    config, more = re.subn(r"(?m)^(  - repo: ).*$", lambda m: m.group(1) + str(ROOT), config)
    assert swaps == more == 1, "the snippet names one repository and one rev"
    good = cmp.dumps(cmp.loads(encode(full()))) + b"\n"
    leaky = encode(put(full(), "constraints[0]", f"The key {AWS} is old."))
    untidy = json.dumps(full()).encode()
    repository = _repository(
        tmp_path / "repo",
        {
            ".pre-commit-config.yaml": config.encode(),
            "good.cmp.json": good,
            "packets/leaky.json": leaky,
            "untidy.cmp.json": untidy,
        },
    )
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose"]
    first = subprocess.run(command, cwd=repository, env=env, capture_output=True, text=True, timeout=900)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert re.search(r"^packets/leaky\.json:1:\d+: redaction constraints\[0\]/aws-key: AKIA…", output, re.M), output
    assert AWS[4:] not in output
    assert (repository / "untidy.cmp.json").read_bytes() == cmp.dumps(cmp.loads(untidy)) + b"\n"
    clean, _ = cmp.scrub(cmp.loads(leaky))
    (repository / "packets" / "leaky.json").write_bytes(cmp.dumps(clean) + b"\n")
    _git(repository, "add", "-A")
    second = subprocess.run(command, cwd=repository, env=env, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout + second.stderr
