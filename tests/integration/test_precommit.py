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


def _head() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _pointed_here(snippet: str) -> str:
    """A .pre-commit-config.yaml with its one repo and rev swapped for this checkout and its HEAD."""
    config, swaps = re.subn(r"(?m)^(    rev: ).*$", rf"\g<1>{_head().strip()}", snippet)
    config, more = re.subn(r"(?m)^(  - repo: ).*$", lambda m: m.group(1) + str(ROOT), config)
    assert swaps == more == 1, "the snippet names one repository and one rev"
    return config


def _run(repository: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose", *args]
    return subprocess.run(command, cwd=repository, env=env, capture_output=True, text=True, timeout=900)


def _hook_lines(output: str) -> list[str]:
    """What the hooks printed, less pre-commit's own lines (its banners and "- hook id:" lines)."""
    return [line for line in output.splitlines() if re.match(r"^[\w./-]+\.json(:\d+:\d+)?: ", line)]


@pytest.mark.parametrize(
    "marker", ["<!-- pre-commit checkout snippet:", "<!-- pre-commit snippet:"], ids=["checkout", "release"]
)
def test_the_documented_configs_work_as_written(tmp_path: Path, home: Path, marker: str) -> None:
    """docs/integrations.md's two .pre-commit-config.yaml forms, repo and rev pointed at this
    checkout's path and HEAD (the release's tag does not exist yet)."""
    snippet = _readme_snippet(marker)
    assert "- id: core-memory-packet\n" in snippet, "the documented config uses the recommended hook"
    good = cmp.dumps(cmp.loads(encode(full()))) + b"\n"
    leaky = encode(put(full(), "constraints[0]", f"The key {AWS} is old."))
    untidy = json.dumps(full()).encode()
    repository = _repository(
        tmp_path / "repo",
        {
            ".pre-commit-config.yaml": _pointed_here(snippet).encode(),
            "good.cmp.json": good,
            "packets/leaky.json": leaky,
            "untidy.cmp.json": untidy,
        },
    )
    first = _run(repository, home)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert re.search(r"^packets/leaky\.json:1:\d+: redaction constraints\[0\]/aws-key: AKIA…", output, re.M), output
    assert re.search(r"^untidy\.cmp\.json:1:2: not canonical: expected a line end", output, re.M), output
    assert AWS[4:] not in output
    assert (repository / "untidy.cmp.json").read_bytes() == untidy  # the hook writes nothing
    # Fix both as the lines say, stage them: the hook passes.
    clean, _ = cmp.scrub(cmp.loads(leaky))
    (repository / "packets" / "leaky.json").write_bytes(cmp.dumps(clean) + b"\n")
    (repository / "untidy.cmp.json").write_bytes(cmp.dumps(cmp.loads(untidy)) + b"\n")
    _git(repository, "add", "-A")
    second = _run(repository, home)
    assert second.returncode == 0, second.stdout + second.stderr


def test_the_manifest_validates_and_every_hook_says_its_stages_types_and_version() -> None:
    import yaml  # pre-commit's own dependency

    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in hooks] == ["core-memory-packet", "cmp-check", "cmp-fmt", "cmp-lint"]
    for hook in hooks:
        # Stage names of pre-commit 3.2.0 and later (the older commit, push, merge-commit are deprecated).
        assert hook["stages"] == ["pre-commit", "pre-merge-commit", "pre-push", "manual"], hook["id"]
        assert hook["types"] == ["json"] and hook["minimum_pre_commit_version"] == "3.2.0", hook["id"]
    assert hooks[0]["entry"] == "core-memory-packet gate"


def test_the_recommended_hook_says_a_leaked_key_once(tmp_path: Path, home: Path) -> None:
    """The recommended hook alone (try-repo HOOK): one line for the key, one for the form, none for the rest."""
    good = cmp.dumps(cmp.loads(encode(full()))) + b"\n"
    leaky = encode(put(full(), "constraints[0]", f"The key {AWS} is old."))  # and not canonical
    untidy = json.dumps(full()).encode()
    repository = _repository(
        tmp_path / "repo",
        {"good.cmp.json": good, "packets/leaky.json": leaky, "docs/untidy.cmp.json": untidy, "other.json": b"{}"},
    )
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "core-memory-packet", "--all-files"]
    result = subprocess.run(command, cwd=repository, env=env, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert [line for line in output.splitlines() if "aws-key" in line] == [
        line for line in _hook_lines(output) if line.startswith("packets/leaky.json")
    ]
    assert len(re.findall("aws-key", output)) == 1, output
    assert re.search(r"^docs/untidy\.cmp\.json:1:2: not canonical: expected a line end, found '\"'", output, re.M)
    assert AWS[4:] not in output
    assert "other.json" not in output and "good.cmp.json: ok" in output


def test_every_hook_refuses_a_key_outside_the_scanned_fields(tmp_path: Path, home: Path) -> None:
    """The writer's rule: a key as provenance.author_human conforms, and no hook lets it be committed.
    All four hooks in one run (try-repo runs every hook of the manifest), each one's status read."""
    leaky = cmp.dumps(cmp.loads(encode(put(full(), "provenance.author_human", AWS)))) + b"\n"
    repository = _repository(tmp_path / "repo", {"packets/leaky.json": leaky})
    result = _try_repo(repository, home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    statuses = re.findall(r"^(.*Core Memory Packets)\.+(Passed|Failed)$", output, re.M)
    assert len(statuses) == 4 and all(status == "Failed" for _, status in statuses), output
    assert output.count("provenance.author_human/aws-key: AKIA… (20 chars)") >= 3 and AWS[4:] not in output
    assert (repository / "packets" / "leaky.json").read_bytes() == leaky


def test_types_keep_files_that_are_not_json_out(tmp_path: Path, home: Path) -> None:
    """With a `files:` of the user's that takes a whole folder, the hook's `types: [json]` leaves
    the folder's README to itself; without the types, the hook would read it as a packet. At the
    manual stage too (stages)."""
    good = cmp.dumps(cmp.loads(encode(full()))) + b"\n"
    config = _pointed_here(
        "repos:\n  - repo: HERE\n    rev: HEAD\n    hooks:\n      - id: core-memory-packet\n        files: ^packets/\n"
    )
    files = {"packets/good.json": good, "packets/README.md": b"# Packets\n\nOne file per session.\n"}
    repository = _repository(tmp_path / "typed", {".pre-commit-config.yaml": config.encode(), **files})
    typed = _run(repository, home, "--hook-stage", "manual")
    assert typed.returncode == 0, typed.stdout + typed.stderr
    assert "packets/good.json: ok" in typed.stdout and "README" not in typed.stdout + typed.stderr
    untyped = _repository(
        tmp_path / "untyped", {".pre-commit-config.yaml": (config + "        types: [file]\n").encode(), **files}
    )
    result = _run(untyped, home)
    assert result.returncode == 1 and "packets/README.md:1:1: " in result.stdout, result.stdout + result.stderr


def test_the_hook_reads_the_repository_settings_and_its_baseline(tmp_path: Path, home: Path) -> None:
    """A repository with a [tool.core-memory-packet] table naming its baseline: the hook reports
    the key the baseline holds as known and passes, then fails on a new key alone."""
    known = cmp.dumps(cmp.loads(encode(put(full(), "constraints[0]", f"The key {AWS} is old.")))) + b"\n"
    config = _pointed_here("repos:\n  - repo: HERE\n    rev: HEAD\n    hooks:\n      - id: core-memory-packet\n")
    repository = _repository(
        tmp_path / "repo",
        {
            ".pre-commit-config.yaml": config.encode(),
            "pyproject.toml": b'[tool.core-memory-packet]\nbaseline = ".cmp-baseline.json"\n',
            "packets/known.json": known,
        },
    )
    written = subprocess.run(
        [sys.executable, "-m", "cmp", "baseline", "packets"],
        cwd=repository,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert written.returncode == 0 and (repository / ".cmp-baseline.json").is_file(), written.stderr
    _git(repository, "add", "-A")
    first = _run(repository, home)
    output = first.stdout + first.stderr
    assert first.returncode == 0, output
    assert re.search(r"^packets/known\.json:\d+:\d+: known redaction constraints\[0\]/aws-key: AKIA…", output, re.M)
    leaky = encode(put(full(), "constraints[0]", "The key AKIAIOSFODNN7EXAMPLF is new."))
    (repository / "packets" / "new.json").write_bytes(cmp.dumps(cmp.loads(leaky)) + b"\n")
    _git(repository, "add", "-A")
    second = _run(repository, home)
    output = second.stdout + second.stderr
    assert second.returncode == 1, output
    assert [line for line in _hook_lines(output) if "aws-key" in line and "known" not in line] == [
        line for line in _hook_lines(output) if line.startswith("packets/new.json:")
    ]
    assert len(re.findall(r"^packets/new\.json:\d+:\d+: redaction constraints\[0\]/aws-key", output, re.M)) == 1
    assert "AKIAIOSFODNN7EXAMPLF"[4:] not in output and AWS[4:] not in output
