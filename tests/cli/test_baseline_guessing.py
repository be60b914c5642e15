"""A baseline's fingerprints cannot be tested against a guess list at a keyed hash's speed (issue 47,
item 6): a password in a URL, baselined, costs an scrypt hash per guess; a baseline of the old format
(version 1, HMAC-SHA256) is refused in one line saying to write it again, which the baseline command does."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.packets import encode, full, put

URL = "postgres://app:tulip42@db.example.com"
GUESSES = ("password", "letmein", "tulip42", "dragon", "admin", "qwerty")  # the six-word list


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "packets").mkdir()
    (tmp_path / "packets" / "db.json").write_bytes(encode(put(full(), "goal", f"Move {URL} to the new host.")))
    return tmp_path


def _baseline(repo: Path) -> dict[str, Any]:
    result = run_cli("baseline", "--rule-set", "extended", "packets", "-o", "b.json", cwd=repo, text=True)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads((repo / "b.json").read_text())
    return data


def test_a_guess_at_a_baselined_password_costs_an_scrypt_hash(repo: Path) -> None:
    data = _baseline(repo)
    assert data["version"] == 2
    [entry] = data["findings"]
    assert (entry["file"], entry["rule"]) == ("packets/db.json", "redaction/extended/url-credentials")
    salt = bytes.fromhex(data["salt"])

    def keyed(match: str) -> str:  # version 1's fingerprint: a microsecond a guess
        return hmac.new(salt, f"url-credentials\0{match}".encode(), hashlib.sha256).hexdigest()

    def hashed(match: str) -> str:  # what docs/ci-policy.md says a fingerprint is
        slow = hashlib.scrypt(match.encode(), salt=salt, n=2**14, r=8, p=1, maxmem=64 * 2**20, dklen=32).hex()
        return hashlib.sha256(f"url-credentials\0{slow}".encode()).hexdigest()

    guesses = [URL.replace("tulip42", word) for word in GUESSES]
    assert not [guess for guess in guesses if keyed(guess) == entry["fingerprint"]]
    # the guess that is right is found only by paying scrypt's cost for it
    assert [guess for guess in guesses if hashed(guess) == entry["fingerprint"]] == [URL]
    assert "tulip42" not in (repo / "b.json").read_text()


def _old_baseline(repo: Path) -> bytes:
    """A baseline as version 1 wrote it: the HMAC-SHA256 of the category and the match, under its salt."""
    salt = bytes(range(16))
    mark = hmac.new(salt, f"url-credentials\0{URL}".encode(), hashlib.sha256).hexdigest()
    entry = {
        "file": "packets/db.json",
        "field": "goal",
        "category": "url-credentials",
        "rule": "redaction/extended/url-credentials",
        "fingerprint": mark,
    }
    data = {"version": 1, "tool": "core-memory-packet", "salt": salt.hex(), "findings": [entry]}
    (repo / "b.json").write_text(json.dumps(data))
    return salt


def test_an_old_baseline_is_refused_in_one_line_saying_to_write_it_again(repo: Path) -> None:
    old_salt = _old_baseline(repo)
    for command in ("check", "gate", "lint"):
        result = run_cli(command, "--rule-set", "extended", "--baseline", "b.json", "packets", cwd=repo, text=True)
        assert (result.returncode, result.stdout) == (2, ""), (command, result.stdout, result.stderr)
        assert result.stderr == (
            "cmp: b.json: a baseline of version 1, whose fingerprints can be guessed offline: write it again "
            "with the baseline command (-o b.json), then commit it\n"
        ), command
    # the baseline command writes over it (where it would not over a file that is no baseline), with a new salt
    data = _baseline(repo)
    assert data["version"] == 2 and bytes.fromhex(data["salt"]) != old_salt
    known = run_cli("check", "--rule-set", "extended", "--baseline", "b.json", "packets", cwd=repo, text=True)
    assert known.returncode == 0 and "known redaction (extended) goal/url-credentials" in known.stdout, known.stdout
